// Two pools for mixed models: the windowed layers' pages come from a pool
// bounded by their window, the other layers keep every page, and a later turn
// reuses a prefix only as far as both pools hold what its next query reads.

#include <QTest>

#include "cache_test_helpers.h"
#include "quire/cache/page_cache.h"
#include "shadow_engine.h"
#include "test_main.h"

using namespace quire::cache;
using namespace quire::test;

namespace {

// Pages of 8 tokens, steps of 8; the windowed layer reads 6 positions (less
// than a page), the other layer all of them. A window of 6 and steps of 8
// touch at most 13 positions: 3 pages of the window pool.
CacheConfig mixed(int pages, int window_pages, int layer_window = 6) {
  CacheConfig config;
  config.page_size = 8;
  config.num_pages = pages;
  config.layer_window = layer_window;
  config.window_pages = window_pages;
  config.max_step_tokens = 8;
  config.layers = {CacheLayer{{2, 8}, -1, true}, CacheLayer{{2, 8}, -1, false},
                   CacheLayer{{2, 8}, -1, true}};
  return config;
}

int held(std::span<const PageIndex> table) {
  int count = 0;
  for (const PageIndex page : table)
    count += page != kNoPage;
  return count;
}

// Runs a prompt to its end and releases it; its pages stay cached.
void run_turn(PageCache& cache, ShadowEngine& engine, const std::vector<TokenId>& tokens) {
  const std::optional<Admission> turn = cache.admit({tokens, 0});
  QVERIFY(turn);
  engine.prefill(*turn);
  QUIRE_VERIFY_EMPTY(engine.verify_sequence(turn->sequence));
  cache.release(turn->sequence);
}

}  // namespace

class PageCachePoolsTest : public QObject {
  Q_OBJECT

 private slots:
  void theWindowPoolIsBoundedByTheLayerWindow() {
    const CacheConfig config = mixed(16, 3);
    QCOMPARE(config.pages_held_at_most(1000), 125);  // the global layers keep all
    const CacheConfig pool = config.window_pool();
    QCOMPARE(pool.window, 6);
    QCOMPARE(pool.num_pages, 3);
    QCOMPARE(pool.host_pages, 0);
    QCOMPARE(pool.pages_held_at_most(1000), 3);
    // Gemma 2: a window of 4,096 in pages of 256, steps of 256; Gemma 3: 1,024.
    CacheConfig gemma = config;
    gemma.page_size = 256;
    gemma.max_step_tokens = 256;
    gemma.layer_window = 4096;
    QCOMPARE(gemma.window_pool().pages_held_at_most(std::int64_t{1} << 20), 18);
    gemma.layer_window = 1024;
    QCOMPARE(gemma.window_pool().pages_held_at_most(std::int64_t{1} << 20), 6);
  }

  void aLongPromptHoldsEveryGlobalPageAndOnlyTheWindowsPages() {
    // 80 tokens: 10 pages in the main pool, 3 in a window pool of 3.
    PageCache cache(mixed(10, 3));
    ShadowEngine engine(cache);
    QVERIFY(cache.window_pool());
    const std::optional<Admission> admission = cache.admit({run_of(80, 1), 0});
    QVERIFY(admission);
    engine.prefill(*admission);
    QCOMPARE(cache.computed(admission->sequence), 80);
    QCOMPARE(held(cache.page_table(admission->sequence)), 10);
    const std::span<const PageIndex> window = cache.window_page_table(admission->sequence);
    QCOMPARE(window.size(), std::size_t(10));
    // The next query, at 80, reads 75..79: page 9 only.
    QCOMPARE(held(window), 1);
    QVERIFY(window[9] != kNoPage);
    QUIRE_VERIFY_EMPTY(engine.verify_sequence(admission->sequence));
    QUIRE_VERIFY_INVARIANTS(cache);
    QCOMPARE(cache.window_pool()->stats().referenced_pages, 1);
    QCOMPARE(cache.window_pool()->stats().cached_pages, 2);
  }

  void aPromptLongerThanTheWindowPoolRunsAndOneLongerThanTheMainPoolNever() {
    PageCache cache(mixed(10, 3));
    AdmissionPlan refused;
    QVERIFY(!cache.admit({run_of(81, 1), 0}, &refused));
    QCOMPARE(refused.status(), AdmissionStatus::NeverFits);
    QVERIFY(cache.admit({run_of(80, 1), 0}));
  }

  void aLaterTurnReusesThePrefixFromBothPools() {
    PageCache cache(mixed(16, 6));
    ShadowEngine engine(cache);
    const std::vector<TokenId> first = run_of(40, 1);
    run_turn(cache, engine, first);
    const std::vector<TokenId> second = joined(first, run_of(9, 500));
    const std::optional<Admission> next = cache.admit({second, 0});
    QVERIFY(next);
    QCOMPARE(next->cached_tokens, 40);
    QCOMPARE(next->compute, (std::vector<TokenRange>{{40, 49}}));
    // Main pool: every page; window pool: from page 4 (the window of 40 is 35..39).
    QCOMPARE(held(cache.page_table(next->sequence)), 7);
    const std::span<const PageIndex> window = cache.window_page_table(next->sequence);
    for (std::size_t slot = 0; slot < 4; ++slot)
      QCOMPARE(window[slot], kNoPage);
    QVERIFY(window[4] != kNoPage);
    engine.prefill(*next);
    QUIRE_VERIFY_EMPTY(engine.verify_sequence(next->sequence));
    QUIRE_VERIFY_INVARIANTS(cache);
  }

  void aPrefixWhoseWindowPagesWereEvictedIsComputedFromWhereTheyAreMissing() {
    // A window pool of 3 pages: the first turn's window pages are evicted by
    // the second conversation, while the main pool keeps the first turn.
    PageCache cache(mixed(16, 3));
    ShadowEngine engine(cache);
    const std::vector<TokenId> first = run_of(40, 1);
    run_turn(cache, engine, first);
    run_turn(cache, engine, run_of(24, 1000));
    const std::optional<Admission> next = cache.admit({joined(first, run_of(9, 500)), 0});
    QVERIFY(next);
    // The main pool would serve all 40, the window pool none: nothing is reused.
    QCOMPARE(next->cached_tokens, 0);
    QCOMPARE(next->compute, (std::vector<TokenRange>{{0, 49}}));
    // No main page is shared: its positions are written again.
    for (const PageIndex page : cache.page_table(next->sequence)) {
      if (page != kNoPage) QCOMPARE(cache.page(page).refs, 1);
    }
    engine.prefill(*next);
    QUIRE_VERIFY_EMPTY(engine.verify_sequence(next->sequence));
    QUIRE_VERIFY_EMPTY(engine.verify_cached_pages());
    QUIRE_VERIFY_INVARIANTS(cache);
  }

  void aPrefixTheMainPoolLostIsComputedFromWhereItsPagesAreMissing() {
    // Main pool of 7: the second conversation evicts the first turn's tail
    // pages (leaf first), while the window pool of 6 still holds its window.
    PageCache cache(mixed(7, 6));
    ShadowEngine engine(cache);
    const std::vector<TokenId> first = run_of(40, 1);
    run_turn(cache, engine, first);
    run_turn(cache, engine, run_of(16, 1000));
    const std::optional<Admission> next = cache.admit({joined(first, run_of(9, 500)), 0});
    QVERIFY(next);
    QVERIFY(next->cached_tokens < 40);
    QCOMPARE(next->compute.size(), std::size_t(1));
    QCOMPARE(next->compute.front().begin, next->cached_tokens);
    engine.prefill(*next);
    QUIRE_VERIFY_EMPTY(engine.verify_sequence(next->sequence));
    QUIRE_VERIFY_INVARIANTS(cache);
  }

  void aBranchTakesItsWindowFromTheWindowPool() {
    PageCache cache(mixed(16, 8));
    ShadowEngine engine(cache);
    const std::optional<Admission> source = cache.admit({run_of(20, 1), 8});
    QVERIFY(source);
    engine.prefill(*source);
    const std::optional<Admission> branch = cache.branch({source->sequence, 20, 8});
    QVERIFY(branch);
    engine.execute(branch->instructions);
    QCOMPARE(branch->instructions.window_copies.size(), std::size_t(1));
    QUIRE_VERIFY_EMPTY(engine.verify_sequence(branch->sequence));
    QCOMPARE(engine.decode(branch->sequence, 77).status, AppendStatus::Appended);
    QUIRE_VERIFY_EMPTY(engine.verify_sequence(branch->sequence));
    QUIRE_VERIFY_INVARIANTS(cache);
    cache.release(source->sequence);
    cache.release(branch->sequence);
    QCOMPARE(cache.window_pool()->stats().sequences, 0);
    QUIRE_VERIFY_INVARIANTS(cache);
  }

  // Each pool counts its own layers' bytes; the cache's statistics count
  // both on each device (what the memory panel shows per device).
  void eachPoolCountsTheBytesOfItsOwnLayers() {
    PageCache cache(mixed(10, 3));
    cache.place_layer(0, 0);
    cache.place_layer(1, 0);
    cache.place_layer(2, 1);
    const std::int64_t page = format_info(CacheFormat::FP16).page_bytes({2, 8}, 8).total();
    const CacheStats window = cache.window_pool()->stats();
    QCOMPARE(window.devices.size(), std::size_t(2));
    QCOMPARE(window.devices[0].allocated_bytes, 3 * page);
    QCOMPARE(window.devices[1].allocated_bytes, 3 * page);
    QCOMPARE(window.total_pages, 3);
    const CacheStats all = cache.stats();
    QCOMPARE(all.total_pages, 10);
    QCOMPARE(all.devices,
             (std::vector<DeviceCacheBytes>{{0, 2, 13 * page, 0}, {1, 1, 3 * page, 0}}));
    ShadowEngine engine(cache);
    run_turn(cache, engine, run_of(20, 1));  // 3 main pages, 3 window pages
    QCOMPARE(cache.stats().devices, (std::vector<DeviceCacheBytes>{{0, 2, 13 * page, 6 * page},
                                                                   {1, 1, 3 * page, 3 * page}}));
  }

  void settingsOutOfRangeAreRefused() {
    CacheConfig config = mixed(4, 0);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, config.validate());
    config = mixed(4, 3);
    config.window = 4;
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, config.validate());
    config = mixed(4, 3);
    config.layer_window = -1;
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, config.validate());
  }
};

QUIRE_TEST(PageCachePoolsTest)
#include "test_page_cache_pools.moc"
