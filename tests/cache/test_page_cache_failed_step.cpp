// A step that fails midway may have written some layers of the pages it
// computes into; pages taken from cached content for it must not give that
// content back on release, since some of its layers are gone.

#include <QTest>
#include <algorithm>

#include "cache_test_helpers.h"
#include "quire/cache/page_cache.h"
#include "test_main.h"

using namespace quire::cache;
using quire::test::run_of;

namespace {

CacheConfig small_cache(int pages) {
  CacheConfig config;
  config.page_size = 4;
  config.num_pages = pages;
  return config;
}

// A sequence of 8 tokens computed and released, then one of 12 that evicts
// its two pages. Returns the second sequence.
SequenceId evict_a_cached_prefix(PageCache& cache) {
  const auto first = cache.admit({run_of(8, 100), 0});
  cache.mark_computed(first->sequence, 8);
  cache.release(first->sequence);
  const auto second = cache.admit({run_of(12, 500), 0});
  if (second->evicted_pages != 2) throw std::logic_error("expected two evictions");
  return second->sequence;
}

}  // namespace

class PageCacheFailedStepTest : public QObject {
  Q_OBJECT

 private slots:
  void untouchedPagesGiveTheirContentBack() {
    PageCache cache(small_cache(3));
    cache.release(evict_a_cached_prefix(cache));
    // Nothing was written: the first sequence's pages are still there.
    const auto again = cache.admit({run_of(8, 100), 0});
    QCOMPARE(again->cached_tokens, 7);  // the last token is always computed
    QUIRE_VERIFY_INVARIANTS(cache);
  }

  void pagesOfAFailedStepForgetTheirContent() {
    PageCache cache(small_cache(3));
    const SequenceId second = evict_a_cached_prefix(cache);
    cache.mark_overwritten(second, 0, 12);
    QUIRE_VERIFY_INVARIANTS(cache);
    cache.release(second);
    const auto again = cache.admit({run_of(8, 100), 0});
    QCOMPARE(again->cached_tokens, 0);
    QCOMPARE(cache.stats().cached_pages, 0);
    QUIRE_VERIFY_INVARIANTS(cache);
  }

  void onlyThePagesOfTheFailedPositionsForget() {
    PageCache cache(small_cache(3));
    const SequenceId second = evict_a_cached_prefix(cache);
    // Only the positions in the page that was free fail: the two evicted
    // pages keep what they held.
    const std::vector<PageIndex> table = quire::test::table_of(cache, second);
    const auto slot = std::find(table.begin(), table.end(), PageIndex{2}) - table.begin();
    QVERIFY(slot < 3);
    const auto begin = static_cast<std::int32_t>(slot) * 4;
    cache.mark_overwritten(second, begin, begin + 4);
    cache.release(second);
    const auto again = cache.admit({run_of(8, 100), 0});
    QCOMPARE(again->cached_tokens, 7);
    QUIRE_VERIFY_INVARIANTS(cache);
  }
};

QUIRE_TEST(PageCacheFailedStepTest)
#include "test_page_cache_failed_step.moc"
