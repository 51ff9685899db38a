// A step that fails midway may have written some layers of the pages it
// computes into; pages taken from cached content for it must not give that
// content back on release, since some of its layers are gone. The same holds
// for an admission whose saves, restores or copies failed midway.

#include <QTest>
#include <algorithm>

#include "cache_test_helpers.h"
#include "quire/cache/page_cache.h"
#include "shadow_engine.h"
#include "test_main.h"

using namespace quire::cache;
using quire::test::joined;
using quire::test::run_of;
using quire::test::small_cache;

namespace {

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

  // A sequence ended after a failure nobody can place: the pages it took
  // past its computed positions forget what they held, its computed page
  // stays cached.
  void releasedAfterAFailureKeepsOnlyWhatWasComputed() {
    PageCache cache(small_cache(3));
    const SequenceId second = evict_a_cached_prefix(cache);
    cache.mark_computed(second, 4);
    cache.release_after_failure(second);
    QVERIFY(!cache.contains(second));
    QUIRE_VERIFY_INVARIANTS(cache);
    QCOMPARE(cache.stats().cached_pages, 1);
    const auto evicted = cache.admit({run_of(8, 100), 0});
    QCOMPARE(evicted->cached_tokens, 0);
    cache.release(evicted->sequence);
    const auto computed = cache.admit({run_of(12, 500), 0});
    QCOMPARE(computed->cached_tokens, 4);
    QUIRE_VERIFY_INVARIANTS(cache);
  }

  // A chat's pages evicted to the host tier are being restored, and the
  // pages evicted for that saved, when the copies fail: the restored pages
  // and the host slots saved into forget their content, and the chat's
  // next admission restores its pages again instead of reviving them.
  void anAbandonedRestoreForgetsWhatItMayHaveHalfWritten() {
    CacheConfig config = small_cache(3);
    config.host_pages = 4;
    PageCache cache(config);
    quire::test::ShadowEngine engine(cache);
    const std::vector<TokenId> chat = run_of(8, 100);
    const auto first = cache.admit({chat, 0});
    engine.prefill(*first);
    cache.release(first->sequence);
    const auto other = cache.admit({run_of(12, 500), 0});
    engine.prefill(*other);
    cache.release(other->sequence);
    QCOMPARE(cache.stats().host_used, 2);

    const auto failed = cache.admit({joined(chat, {999}), 0});
    QCOMPARE(failed->instructions.restores.size(), std::size_t{2});
    QCOMPARE(failed->instructions.saves.size(), std::size_t{2});
    cache.abandon(failed->sequence, failed->instructions);
    QVERIFY(!cache.contains(failed->sequence));
    QUIRE_VERIFY_INVARIANTS(cache);
    // The slots saved into are empty; the restored chat's stay.
    QCOMPARE(cache.stats().host_used, 2);
    for (const HostRestore& restore : failed->instructions.restores)
      QCOMPARE(cache.page(restore.page).state(), PageState::Free);

    const auto again = cache.admit({joined(chat, {999}), 0});
    QCOMPARE(again->instructions.restores.size(), std::size_t{2});
    QCOMPARE(again->cached_tokens, 8);
    engine.prefill(*again);
    QUIRE_VERIFY_EMPTY(engine.verify_sequence(again->sequence));
    QUIRE_VERIFY_INVARIANTS(cache);
  }

  // A prompt that ends inside a cached page copies that page's matching
  // tokens; when the copy fails the page it was copying into is freed and
  // the source keeps its content for the next try.
  void anAbandonedCopyFreesThePageItWasCopyingInto() {
    PageCache cache(small_cache(6));
    quire::test::ShadowEngine engine(cache);
    const std::vector<TokenId> chat = run_of(6, 100);
    const auto first = cache.admit({chat, 0});
    engine.prefill(*first);
    cache.release(first->sequence);

    const std::vector<TokenId> longer = joined(chat, {700, 701, 702});
    const auto failed = cache.admit({longer, 0});
    QCOMPARE(failed->instructions.copies.size(), std::size_t{1});
    const PageCopy copy = failed->instructions.copies.front();
    cache.abandon(failed->sequence, failed->instructions);
    QUIRE_VERIFY_INVARIANTS(cache);
    QCOMPARE(cache.page(copy.destination).state(), PageState::Free);
    QCOMPARE(cache.page(copy.source).state(), PageState::Cached);

    const auto again = cache.admit({longer, 0});
    QCOMPARE(again->instructions.copies.size(), std::size_t{1});
    QCOMPARE(again->cached_tokens, failed->cached_tokens);
    engine.prefill(*again);
    QUIRE_VERIFY_EMPTY(engine.verify_sequence(again->sequence));
    QUIRE_VERIFY_INVARIANTS(cache);
  }

  // Saves into the host tier that failed while pages were taken for a step:
  // their slots are emptied and nothing else changes.
  void droppedHostSavesEmptyTheirSlots() {
    CacheConfig config = small_cache(3);
    config.host_pages = 4;
    PageCache cache(config);
    quire::test::ShadowEngine engine(cache);
    const auto first = cache.admit({run_of(8, 100), 0});
    engine.prefill(*first);
    cache.release(first->sequence);
    const auto other = cache.admit({run_of(12, 500), 0});
    QCOMPARE(cache.stats().host_used, 2);
    cache.drop_host_saves(other->instructions.saves);
    QCOMPARE(cache.stats().host_used, 0);
    engine.prefill(*other);
    cache.release(other->sequence);
    QUIRE_VERIFY_INVARIANTS(cache);
    const auto again = cache.admit({run_of(8, 100), 0});
    QCOMPARE(again->cached_tokens, 0);
    QVERIFY(again->instructions.restores.empty());
    QUIRE_VERIFY_INVARIANTS(cache);
  }
};

QUIRE_TEST(PageCacheFailedStepTest)
#include "test_page_cache_failed_step.moc"
