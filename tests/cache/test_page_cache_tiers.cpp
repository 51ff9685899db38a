// The host-memory tier, defragmentation, and per-device statistics.

#include <QTest>

#include "cache_test_helpers.h"
#include "quire/cache/page_cache.h"
#include "shadow_engine.h"
#include "test_main.h"

using namespace quire::cache;
using quire::test::joined;
using quire::test::run_of;
using quire::test::ShadowEngine;
using quire::test::small_cache;
using quire::test::table_of;

namespace {

bool consecutive(const std::vector<PageIndex>& pages) {
  for (std::size_t i = 1; i < pages.size(); ++i) {
    if (pages[i] != pages[i - 1] + 1) return false;
  }
  return true;
}

}  // namespace

class PageCacheTiersTest : public QObject {
  Q_OBJECT

 private slots:
  void evictedPagesGoToTheHostTierAndComeBack() {
    CacheConfig config = small_cache(3);
    config.host_pages = 4;
    PageCache cache(config);
    ShadowEngine engine(cache);

    const std::vector<TokenId> a_tokens = run_of(8, 100);
    const auto a = cache.admit({a_tokens, 0});
    engine.prefill(*a);
    cache.release(a->sequence);

    // b needs all three pages: a's two pages are evicted, tail first, and saved.
    const auto b = cache.admit({run_of(12, 500), 0});
    QCOMPARE(table_of(cache, b->sequence), (std::vector<PageIndex>{2, 1, 0}));
    QCOMPARE(b->instructions.saves, (std::vector<HostSave>{{1, 0}, {0, 1}}));
    engine.prefill(*b);
    cache.release(b->sequence);
    QCOMPARE(cache.stats().host_used, 2);

    // a's conversation continues: both pages come back from the host tier.
    const auto a2 = cache.admit({joined(a_tokens, {999}), 0});
    QCOMPARE(a2->instructions.restores, (std::vector<HostRestore>{{1, 0}, {0, 1}}));
    // b's pages are saved first, into the two free host slots.
    QCOMPARE(a2->instructions.saves, (std::vector<HostSave>{{0, 2}, {1, 3}}));
    QCOMPARE(a2->cached_tokens, 8);
    QCOMPARE(a2->compute, (std::vector<TokenRange>{{8, 9}}));
    engine.prefill(*a2);
    QUIRE_VERIFY_EMPTY(engine.verify_sequence(a2->sequence));

    const CacheStats stats = cache.stats();
    QCOMPARE(stats.host_saves, qint64(4));
    QCOMPARE(stats.host_restores, qint64(2));
    QCOMPARE(stats.restored_tokens, qint64(8));
    QCOMPARE(stats.host_used, 4);
    QCOMPARE(stats.host_capacity, 4);
    QUIRE_VERIFY_INVARIANTS(cache);
  }

  void fullHostTierDropsItsLeastRecentlyUsedPage() {
    CacheConfig config = small_cache(1);
    config.host_pages = 1;
    PageCache cache(config);
    ShadowEngine engine(cache);
    for (int round = 0; round < 3; ++round) {
      const auto admission = cache.admit({run_of(4, 100 * (round + 1)), 0});
      engine.prefill(*admission);
      cache.release(admission->sequence);
    }
    const CacheStats stats = cache.stats();
    QCOMPARE(stats.host_saves, qint64(2));
    QCOMPARE(stats.host_evictions, qint64(1));
    QCOMPARE(stats.host_used, 1);
    QUIRE_VERIFY_INVARIANTS(cache);
  }

  void defragmentationLaysChainsOutContiguously() {
    CacheConfig config;
    config.page_size = 2;
    config.num_pages = 10;
    PageCache cache(config);
    ShadowEngine engine(cache);

    const auto a = cache.admit({run_of(6, 100), 0});  // pages 0..2
    engine.prefill(*a);
    const auto b = cache.admit({run_of(6, 200), 0});  // pages 3..5
    engine.prefill(*b);
    // Not every page has been used yet: nothing to gain.
    QVERIFY(!cache.defragment());
    const auto c = cache.admit({run_of(8, 300), 0});  // pages 6..9
    engine.prefill(*c);
    cache.release(b->sequence);
    const auto d = cache.admit({run_of(4, 400), 0});  // takes b's tail: pages 5, 4
    QCOMPARE(table_of(cache, d->sequence), (std::vector<PageIndex>{5, 4}));
    engine.prefill(*d);
    cache.release(a->sequence);

    const std::optional<DefragPlan> plan = cache.defragment();
    QVERIFY(plan);
    QVERIFY(plan->pages_moved > 1);
    engine.apply(*plan);
    QUIRE_VERIFY_EMPTY(engine.verify_sequence(c->sequence));
    QUIRE_VERIFY_EMPTY(engine.verify_sequence(d->sequence));
    QUIRE_VERIFY_EMPTY(engine.verify_cached_pages());
    QVERIFY(consecutive(table_of(cache, c->sequence)));
    QVERIFY(consecutive(table_of(cache, d->sequence)));
    QUIRE_VERIFY_INVARIANTS(cache);

    const CacheStats stats = cache.stats();
    QCOMPARE(stats.defragmentations, qint64(1));
    QCOMPARE(stats.pages_moved, qint64(plan->pages_moved));
    // Pages have not all been touched since: the next call does nothing.
    QVERIFY(!cache.defragment());

    // a's conversation still finds its pages after the moves.
    const auto a2 = cache.admit({joined(run_of(6, 100), {1}), 0});
    QCOMPARE(a2->cached_tokens, 6);
    engine.prefill(*a2);
    QUIRE_VERIFY_EMPTY(engine.verify_sequence(a2->sequence));
  }

  void orderedCacheIsNotDefragmented() {
    CacheConfig config;
    config.page_size = 1;
    config.num_pages = 10;
    PageCache cache(config);
    ShadowEngine engine(cache);
    const auto a = cache.admit({run_of(10, 100), 0});
    engine.prefill(*a);
    cache.release(a->sequence);
    QVERIFY(!cache.defragment());
    QCOMPARE(cache.stats().defragmentations, qint64(0));
  }

  void statisticsCountBytesPerDevice() {
    CacheConfig config = small_cache(8);
    config.layers.assign(4, CacheLayer{LayerShape{8, 128}, -1});
    PageCache cache(config);
    cache.place_layer(0, 0);
    cache.place_layer(1, 0);
    cache.place_layer(2, 1);
    QVERIFY(cache.admit({run_of(10, 100), 0}));

    // FP16: 8 heads x 128 dims x 2 bytes x (K + V) = 4096 bytes per token.
    const std::int64_t page = 4 * 4096;
    const CacheStats stats = cache.stats();
    QCOMPARE(stats.devices.size(), std::size_t(2));
    QCOMPARE(stats.devices[0], (DeviceCacheBytes{0, 2, 2 * 8 * page, 2 * 3 * page}));
    QCOMPARE(stats.devices[1], (DeviceCacheBytes{1, 1, 8 * page, 3 * page}));
  }

  void configurationErrorsNameTheSetting() {
    CacheConfig config;
    config.page_size = 256;
    config.num_pages = 0;
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, PageCache{config});
    config.num_pages = 4;
    config.format = CacheFormat::Q4;
    config.layers.assign(1, CacheLayer{LayerShape{8, 80}, -1});
    try {
      PageCache cache(config);
      QFAIL("a Q4 cache for head_dim 80 was accepted");
    } catch (const std::invalid_argument& error) {
      QVERIFY(std::string(error.what()).find("head_dim is 80") != std::string::npos);
    }
  }
};

QUIRE_TEST(PageCacheTiersTest)
#include "test_page_cache_tiers.moc"
