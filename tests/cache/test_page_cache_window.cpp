// Sliding windows in the page cache: a sequence holds only the pages its next
// queries read, pages behind the window stay cached under their hash, a later
// turn reuses a prefix whose window is present, and ReserveOnAdmission promises
// the pages a long prefill will take.

#include <QTest>

#include "cache_test_helpers.h"
#include "quire/cache/page_cache.h"
#include "shadow_engine.h"
#include "test_main.h"

using namespace quire::cache;
using namespace quire::test;

namespace {

// Pages of 8 tokens, a window of 12 (not a multiple of a page), steps of 8.
CacheConfig windowed(int pages, ReservationPolicy policy = ReservationPolicy::ReserveOnAdmission) {
  CacheConfig config;
  config.page_size = 8;
  config.num_pages = pages;
  config.window = 12;
  config.max_step_tokens = 8;
  config.reservation = policy;
  return config;
}

int held(const PageCache& cache, SequenceId sequence) {
  int count = 0;
  for (const PageIndex page : cache.page_table(sequence))
    count += page != kNoPage;
  return count;
}

}  // namespace

class PageCacheWindowTest : public QObject {
  Q_OBJECT

 private slots:
  void boundCoversTheWindowAndOneStep() {
    const CacheConfig config = windowed(64);
    // Keys window - 1 = 11 before a step of 8: 19 positions touch at most 4 pages.
    QCOMPARE(config.pages_held_at_most(1000), 4);
    QCOMPARE(config.pages_held_at_most(20), 3);  // short sequences: all their pages
    // Mistral 7B v0.1: a window of 4,096 in pages of 256, steps of 256.
    CacheConfig mistral;
    mistral.window = 4096;
    mistral.max_step_tokens = 256;
    QCOMPARE(mistral.pages_held_at_most(std::int64_t{1} << 20), 18);
    CacheConfig unbounded = config;
    unbounded.window = 0;
    QCOMPARE(unbounded.pages_held_at_most(1000), 125);
  }

  void aLongPromptHoldsOnlyItsWindow() {
    PageCache cache(windowed(6));
    ShadowEngine engine(cache);
    // 80 tokens = 10 pages, more than the cache has: fits because of the window.
    const std::optional<Admission> admission = cache.admit({run_of(80, 1), 0});
    QVERIFY(admission);
    QCOMPARE(held(cache, admission->sequence), 4);
    QCOMPARE(cache.reserved_pages(), 0);  // its first four pages are already taken
    engine.prefill(*admission);
    QVERIFY(cache.computed(admission->sequence) == 80);
    // Positions 68..79 are the window of the next query: pages 8 and 9.
    const std::vector<PageIndex> table = table_of(cache, admission->sequence);
    QCOMPARE(table.size(), std::size_t(10));
    for (std::size_t slot = 0; slot < 8; ++slot)
      QCOMPARE(table[slot], kNoPage);
    QVERIFY(table[8] != kNoPage && table[9] != kNoPage);
    QUIRE_VERIFY_EMPTY(engine.verify_sequence(admission->sequence));
    QUIRE_VERIFY_INVARIANTS(cache);
    const CacheStats stats = cache.stats();
    QCOMPARE(stats.referenced_pages, 2);
    QCOMPARE(stats.cached_pages, 4);  // the rest were reused as the prefill went on
  }

  void aLaterTurnReusesAPrefixWhoseWindowIsCached() {
    PageCache cache(windowed(12));
    ShadowEngine engine(cache);
    const std::vector<TokenId> first = run_of(40, 1);
    const std::optional<Admission> turn = cache.admit({first, 0});
    QVERIFY(turn);
    engine.prefill(*turn);
    cache.release(turn->sequence);

    // The next turn continues the conversation: the prefix up to the last
    // full page whose window (pages 3 and 4, positions 29..39) is cached.
    const std::vector<TokenId> second = joined(first, run_of(9, 500));
    const std::optional<Admission> next = cache.admit({second, 0});
    QVERIFY(next);
    QCOMPARE(next->cached_tokens, 40);
    QCOMPARE(next->compute.size(), std::size_t(1));
    QCOMPARE(next->compute.front(), (TokenRange{40, 49}));
    const std::vector<PageIndex> table = table_of(cache, next->sequence);
    QCOMPARE(table[0], kNoPage);  // skipped: before the window of position 40
    QCOMPARE(table[1], kNoPage);
    QCOMPARE(table[2], kNoPage);
    QVERIFY(table[3] != kNoPage && table[4] != kNoPage);
    engine.prefill(*next);
    QUIRE_VERIFY_EMPTY(engine.verify_sequence(next->sequence));
    QUIRE_VERIFY_INVARIANTS(cache);
  }

  void aPrefixWithoutItsWindowIsComputedAgain() {
    PageCache cache(windowed(12));
    ShadowEngine engine(cache);
    const std::vector<TokenId> first = run_of(40, 1);
    const std::optional<Admission> turn = cache.admit({first, 0});
    QVERIFY(turn);
    engine.prefill(*turn);
    cache.release(turn->sequence);
    // A prompt that shares only the first 16 tokens: page 1 is cached but the
    // window of position 16 needs page 0 (positions 5..15), which is cached too.
    std::vector<TokenId> other = run_of(16, 1);
    other = joined(other, run_of(20, 900));
    const std::optional<Admission> branch = cache.admit({other, 0});
    QVERIFY(branch);
    QCOMPARE(branch->cached_tokens, 16);
    QCOMPARE(branch->compute.front().begin, 16);
    engine.prefill(*branch);
    QUIRE_VERIFY_EMPTY(engine.verify_sequence(branch->sequence));
    QUIRE_VERIFY_INVARIANTS(cache);
  }

  void reserveOnAdmissionPromisesThePagesAPrefillWillTake() {
    PageCache cache(windowed(8));
    ShadowEngine engine(cache);
    // 60 prompt tokens + 4 new: bound 4 pages; it takes them all at once.
    const std::optional<Admission> first = cache.admit({run_of(60, 1), 4});
    QVERIFY(first);
    QCOMPARE(held(cache, first->sequence), 4);
    QCOMPARE(cache.reserved_pages(), 0);
    // A second long request needs its own 4: it fits exactly, and a third waits.
    const std::optional<Admission> second = cache.admit({run_of(60, 1000), 4});
    QVERIFY(second);
    AdmissionPlan refused;
    QVERIFY(!cache.admit({run_of(9, 3000), 0}, &refused));
    QCOMPARE(refused.status(), AdmissionStatus::WaitForPages);
    // Both prefill and decode to the end without ever running out.
    engine.prefill(*first);
    engine.prefill(*second);
    for (int i = 0; i < 4; ++i) {
      QCOMPARE(engine.decode(first->sequence, 7).status, AppendStatus::Appended);
      QCOMPARE(engine.decode(second->sequence, 8).status, AppendStatus::Appended);
      QVERIFY(held(cache, first->sequence) <= 4);
    }
    QUIRE_VERIFY_EMPTY(engine.verify_sequence(first->sequence));
    QUIRE_VERIFY_EMPTY(engine.verify_sequence(second->sequence));
    QUIRE_VERIFY_INVARIANTS(cache);
  }

  void aShortPromptThatLeavesRoomPromisesTheRest() {
    PageCache cache(windowed(8));
    // 10 tokens + 40 new: 7 pages over its life, 4 at most at once; 2 taken
    // now, 2 promised for the reply.
    const std::optional<Admission> admission = cache.admit({run_of(10, 1), 40});
    QVERIFY(admission);
    QCOMPARE(held(cache, admission->sequence), 2);
    QCOMPARE(cache.reserved_pages(), 2);
    // Only 8 - 2 - 2 = 4 pages remain for others: one request of 4 fits,
    // then nothing more.
    QVERIFY(cache.admit({run_of(30, 500), 0}));
    AdmissionPlan refused;
    QVERIFY(!cache.admit({run_of(9, 3000), 0}, &refused));
    QCOMPARE(refused.status(), AdmissionStatus::WaitForPages);
    QCOMPARE(cache.reserved_pages(), 2);
    QUIRE_VERIFY_INVARIANTS(cache);
  }

  void recomputingAWholePromptKeepsEveryPage() {
    PageCache cache(windowed(12));
    ShadowEngine engine(cache);
    const std::optional<Admission> turn = cache.admit({run_of(40, 1), 0});
    QVERIFY(turn);
    engine.prefill(*turn);
    cache.release(turn->sequence);
    AdmissionRequest request{run_of(40, 1), 0};
    request.every_page = true;
    const std::optional<Admission> again = cache.admit(request);
    QVERIFY(again);
    for (const PageIndex page : cache.page_table(again->sequence))
      QVERIFY(page != kNoPage);
    QUIRE_VERIFY_INVARIANTS(cache);
  }

  void aNegativeWindowIsRefused() {
    CacheConfig config = windowed(4);
    config.window = -1;
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, config.validate());
  }
};

QUIRE_TEST(PageCacheWindowTest)
#include "test_page_cache_window.moc"
