// The disk tier in the bookkeeping: evicted pages are saved to disk, a later
// admission (in this process or the next) restores what neither memory tier
// has, a restore that fails is abandoned and computed, and sliding windows
// restore only the window they read.

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

std::vector<PageHash> hashes_of(std::span<const TokenId> tokens, int page_size) {
  const std::size_t full = tokens.size() / static_cast<std::size_t>(page_size);
  return hash_full_pages(tokens.first(full * static_cast<std::size_t>(page_size)), page_size);
}

int pages_from_disk(const PageCache& cache) {
  int count = 0;
  for (const PageInfo& info : cache.pages())
    count += info.from_disk;
  return count;
}

// Pages of 8 tokens, a window of 12, steps of 8 (as test_page_cache_window).
CacheConfig windowed(int pages) {
  CacheConfig config;
  config.page_size = 8;
  config.num_pages = pages;
  config.window = 12;
  config.max_step_tokens = 8;
  return config;
}

}  // namespace

class PageCacheDiskTest : public QObject {
  Q_OBJECT

 private slots:
  void evictedPagesGoToDiskAndComeBackAfterARestart() {
    const std::vector<TokenId> chat = run_of(8, 100);  // two full pages
    ShadowEngine::Disk disk;
    {
      PageCache cache(small_cache(3));
      ShadowEngine engine(cache);
      engine.attach_disk();
      const auto a = cache.admit({chat, 0});
      engine.prefill(*a);
      cache.release(a->sequence);
      QVERIFY(engine.disk().empty());  // nothing is written while pages stay

      // Another chat needs every page: the chat's two are evicted, to disk.
      const auto b = cache.admit({run_of(12, 500), 0});
      const std::vector<PageHash> hashes = hashes_of(chat, 4);
      QCOMPARE(b->instructions.disk_saves,
               (std::vector<DiskSave>{{1, hashes[1], hashes[0]}, {0, hashes[0], std::nullopt}}));
      engine.prefill(*b);
      QCOMPARE(engine.disk().size(), std::size_t(2));
      QCOMPARE(cache.stats().disk_saves, qint64(2));
      QUIRE_VERIFY_INVARIANTS(cache);
      disk = engine.disk();
    }

    // The next process: a cold cache over the same disk.
    PageCache cache(small_cache(3));
    ShadowEngine engine(cache);
    engine.attach_disk(disk);
    const auto resumed = cache.admit({joined(chat, {999}), 0});
    QVERIFY(resumed);
    const std::vector<PageHash> hashes = hashes_of(chat, 4);
    QCOMPARE(resumed->instructions.disk_restores,
             (std::vector<DiskRestore>{{hashes[0], 0}, {hashes[1], 1}}));
    QCOMPARE(resumed->cached_tokens, 8);
    QCOMPARE(resumed->disk_tokens, 8);
    QCOMPARE(resumed->compute, (std::vector<TokenRange>{{8, 9}}));
    engine.prefill(*resumed);
    QVERIFY(engine.failed_restores().empty());
    QUIRE_VERIFY_EMPTY(engine.verify_sequence(resumed->sequence));
    QCOMPARE(pages_from_disk(cache), 2);

    const CacheStats stats = cache.stats();
    QCOMPARE(stats.disk_restores, qint64(2));
    QCOMPARE(stats.disk_restored_tokens, qint64(8));
    QCOMPARE(stats.restored_tokens, qint64(0));
    QCOMPARE(stats.computed_tokens, qint64(1));
    QCOMPARE(stats.served_tokens(), qint64(8));
    QUIRE_VERIFY_INVARIANTS(cache);

    // Once released, the restored pages are ordinary cached pages: the next
    // turn shares them from memory.
    cache.release(resumed->sequence);
    const auto again = cache.admit({joined(chat, {999, 1000}), 0});
    QVERIFY(again->instructions.disk_restores.empty());
    QCOMPARE(again->cached_tokens, 8);
  }

  void thePlanCountsDiskTokensBeforeAnythingChanges() {
    ShadowEngine::Disk disk;
    const std::vector<TokenId> chat = run_of(12, 40);
    {
      PageCache cache(small_cache(4));
      ShadowEngine engine(cache);
      engine.attach_disk();
      const auto a = cache.admit({chat, 0});
      engine.prefill(*a);
      cache.release(a->sequence);
      engine.prefill(*cache.admit({run_of(16, 900), 0}));  // evicts all three
      disk = engine.disk();
    }
    QCOMPARE(disk.size(), std::size_t(3));
    PageCache cache(small_cache(4));
    ShadowEngine engine(cache);
    engine.attach_disk(disk);
    const AdmissionPlan plan = cache.prepare({joined(chat, {7}), 3});
    QVERIFY(plan.fits());
    QCOMPARE(plan.cached_tokens(), 12);
    QCOMPARE(plan.disk_tokens(), 12);
    QCOMPARE(cache.stats().disk_restores, qint64(0));
  }

  void pagesOnDiskAreNotSavedAgain() {
    PageCache cache(small_cache(2));
    ShadowEngine engine(cache);
    engine.attach_disk();
    const std::vector<TokenId> chat = run_of(8, 100);
    std::vector<std::size_t> saves;
    for (int round = 0; round < 2; ++round) {
      const auto a = cache.admit({chat, 0});
      saves.push_back(a->instructions.disk_saves.size());
      engine.prefill(*a);
      cache.release(a->sequence);
      const auto other = cache.admit({run_of(8, 300 + 100 * round), 0});
      saves.push_back(other->instructions.disk_saves.size());
      engine.prefill(*other);
      cache.release(other->sequence);
    }
    // The chat's pages go to disk once; coming back, it evicts the first
    // other chat's, and leaving again it is found there already.
    QCOMPARE(saves, (std::vector<std::size_t>{0, 2, 2, 0}));
    QCOMPARE(engine.disk().size(), std::size_t(4));
    QCOMPARE(cache.stats().disk_saves, qint64(4));
    // The chat's second round read its first page (the second holds the
    // prompt's last token, which is always computed).
    QCOMPARE(cache.stats().disk_restores, qint64(1));
    QUIRE_VERIFY_EMPTY(engine.verify_cached_pages());
    QUIRE_VERIFY_INVARIANTS(cache);
  }

  void memoryTiersComeBeforeTheDisk() {
    CacheConfig config = small_cache(3);
    config.host_pages = 2;
    PageCache cache(config);
    ShadowEngine engine(cache);
    engine.attach_disk();
    const std::vector<TokenId> chat = run_of(8, 100);
    const auto a = cache.admit({chat, 0});
    engine.prefill(*a);
    cache.release(a->sequence);
    const auto other = cache.admit({run_of(12, 300), 0});
    // Evicted pages go to both tiers: host memory for speed, disk to last.
    QCOMPARE(other->instructions.saves.size(), std::size_t(2));
    QCOMPARE(other->instructions.disk_saves.size(), std::size_t(2));
    engine.prefill(*other);
    cache.release(other->sequence);

    const auto resumed = cache.admit({joined(chat, {1}), 0});
    QCOMPARE(resumed->instructions.restores.size(), std::size_t(2));
    QVERIFY(resumed->instructions.disk_restores.empty());
    QCOMPARE(resumed->disk_tokens, 0);
    engine.prefill(*resumed);
    QUIRE_VERIFY_EMPTY(engine.verify_sequence(resumed->sequence));
    QCOMPARE(pages_from_disk(cache), 0);
  }

  void aFailedRestoreIsAbandonedAndTheChatComputed() {
    PageCache cache(small_cache(3));
    ShadowEngine engine(cache);
    engine.attach_disk();
    const std::vector<TokenId> chat = run_of(8, 100);
    const auto a = cache.admit({chat, 0});
    engine.prefill(*a);
    cache.release(a->sequence);
    const auto other = cache.admit({run_of(12, 500), 0});
    engine.prefill(*other);
    cache.release(other->sequence);
    QCOMPARE(engine.disk().size(), std::size_t(2));

    const std::vector<TokenId> next = joined(chat, {7});
    const auto resumed = cache.admit({next, 0});
    QCOMPARE(resumed->disk_tokens, 8);
    // The second page's file is gone by the time it is read (another
    // process removed it, or it was damaged and refused).
    engine.disk().erase(hashes_of(chat, 4)[1]);
    engine.execute(resumed->instructions);
    QCOMPARE(engine.failed_restores().size(), std::size_t(1));
    const std::int64_t prompts_before = cache.stats().prompt_tokens;
    cache.abandon(resumed->sequence, resumed->instructions);
    QCOMPARE(pages_from_disk(cache), 0);
    QUIRE_VERIFY_INVARIANTS(cache);
    // The abandoned admission is taken out of the statistics.
    QCOMPARE(cache.stats().disk_restores, qint64(0));
    QCOMPARE(cache.stats().disk_restored_tokens, qint64(0));
    QCOMPARE(cache.stats().prompt_tokens, prompts_before - 9);

    // Admitted again, the chat restores what is there and computes the rest.
    const auto retried = cache.admit({next, 0});
    QCOMPARE(retried->disk_tokens, 4);
    QCOMPARE(retried->compute, (std::vector<TokenRange>{{4, 9}}));
    engine.prefill(*retried);
    QCOMPARE(engine.failed_restores().size(), std::size_t(1));
    QCOMPARE(cache.stats().disk_restored_tokens, qint64(4));
    QCOMPARE(cache.stats().prompt_tokens, prompts_before);
    QUIRE_VERIFY_EMPTY(engine.verify_sequence(retried->sequence));
    QUIRE_VERIFY_EMPTY(engine.verify_cached_pages());
    QUIRE_VERIFY_INVARIANTS(cache);
  }

  void aSlidingWindowRestoresOnlyTheWindowItReads() {
    const std::vector<TokenId> first = run_of(40, 1);  // five pages of 8
    ShadowEngine::Disk disk;
    {
      PageCache cache(windowed(12));
      ShadowEngine engine(cache);
      engine.attach_disk();
      const auto turn = cache.admit({first, 0});
      engine.prefill(*turn);
      cache.release(turn->sequence);
      engine.prefill(*cache.admit({run_of(90, 700), 0}));
      disk = engine.disk();
    }
    QVERIFY(disk.size() >= 5);

    PageCache cache(windowed(12));
    ShadowEngine engine(cache);
    engine.attach_disk(disk);
    const auto next = cache.admit({joined(first, run_of(9, 500)), 0});
    QVERIFY(next);
    // Position 40's window (29..39) lies in pages 3 and 4: only they are read.
    const std::vector<PageHash> hashes = hashes_of(first, 8);
    QCOMPARE(next->instructions.disk_restores.size(), std::size_t(2));
    QCOMPARE(next->instructions.disk_restores[0].hash, hashes[3]);
    QCOMPARE(next->instructions.disk_restores[1].hash, hashes[4]);
    QCOMPARE(next->cached_tokens, 40);
    QCOMPARE(next->disk_tokens, 16);
    QCOMPARE(next->compute, (std::vector<TokenRange>{{40, 49}}));
    const std::vector<PageIndex> table = table_of(cache, next->sequence);
    QCOMPARE(table[0], kNoPage);
    engine.prefill(*next);
    QUIRE_VERIFY_EMPTY(engine.verify_sequence(next->sequence));
    QUIRE_VERIFY_INVARIANTS(cache);
  }

  void aCacheWithAWindowPoolRefusesTheDiskTier() {
    CacheConfig config = small_cache(8);
    config.layer_window = 6;
    config.window_pages = 4;
    config.max_step_tokens = 4;
    config.layers = {CacheLayer{LayerShape{1, 8}, -1, false},
                     CacheLayer{LayerShape{1, 8}, -1, true}};
    PageCache cache(config);
    ShadowEngine engine(cache);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, engine.attach_disk());
    QVERIFY(cache.disk() == nullptr);
  }

  void decodeEvictionsSaveToDisk() {
    // Reserve as pages are needed: a decode that passes a page boundary
    // evicts a cached page, which goes to disk with the append's result.
    PageCache cache(small_cache(3, ReservationPolicy::OnDemand));
    ShadowEngine engine(cache);
    engine.attach_disk();
    const auto a = cache.admit({run_of(4, 100), 0});
    engine.prefill(*a);
    cache.release(a->sequence);
    const auto b = cache.admit({run_of(8, 200), 4});
    engine.prefill(*b);
    QVERIFY(engine.disk().empty());
    AppendResult result;
    for (int i = 0; i < 4 && result.disk_saves.empty(); ++i)
      result = engine.decode(b->sequence, 5000 + i);
    QCOMPARE(result.disk_saves.size(), std::size_t(1));
    QCOMPARE(result.disk_saves[0].hash, hashes_of(run_of(4, 100), 4)[0]);
    QCOMPARE(engine.disk().size(), std::size_t(1));
    QUIRE_VERIFY_EMPTY(engine.verify_sequence(b->sequence));
    QUIRE_VERIFY_INVARIANTS(cache);
  }
};

QUIRE_TEST(PageCacheDiskTest)
#include "test_page_cache_disk.moc"
