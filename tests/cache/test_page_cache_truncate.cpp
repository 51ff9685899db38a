// Giving back tokens a sequence appended but never computed (a speculative
// step's rejected drafts): only its own unsealed tail changes, its pages
// stay in its table, and pages written for the dropped tokens forget what
// they held before they were taken.

#include <QTest>
#include <stdexcept>

#include "cache_test_helpers.h"
#include "quire/cache/page_cache.h"
#include "test_main.h"

using namespace quire::cache;
using quire::test::joined;
using quire::test::run_of;
using quire::test::small_cache;
using quire::test::table_of;
using quire::test::tokens_of;

class PageCacheTruncateTest : public QObject {
  Q_OBJECT

 private slots:
  void droppedTokensLeaveTheTailAndThePagesStay() {
    PageCache cache(small_cache(8, ReservationPolicy::OnDemand));
    const auto admitted = cache.admit({run_of(6, 10), 0});
    const SequenceId sequence = admitted->sequence;
    cache.mark_computed(sequence, 6);
    // Drafts across a page boundary: positions 6..10, pages 1 and 2.
    QCOMPARE(cache.append(sequence, run_of(5, 90)).status, AppendStatus::Appended);
    const std::vector<PageIndex> table = table_of(cache, sequence);
    QCOMPARE(table.size(), std::size_t(3));
    cache.truncate(sequence, 8);
    QCOMPARE(tokens_of(cache, sequence), joined(run_of(6, 10), run_of(2, 90)));
    QCOMPARE(table_of(cache, sequence), table);
    QCOMPARE(cache.page(table[1]).identity.filled, 4);
    QCOMPARE(cache.page(table[2]).identity.filled, 0);
    QUIRE_VERIFY_INVARIANTS(cache);
    // The kept tokens are computed; the next ones fill the same pages.
    cache.mark_computed(sequence, 8);
    QVERIFY(cache.page(table[1]).identity.hashed);
    QCOMPARE(cache.append(sequence, run_of(3, 200)).status, AppendStatus::Appended);
    QCOMPARE(table_of(cache, sequence), table);
    cache.mark_computed(sequence, 11);
    QCOMPARE(cache.page(table[2]).identity.filled, 3);
    QUIRE_VERIFY_INVARIANTS(cache);
    cache.release(sequence);
    QUIRE_VERIFY_INVARIANTS(cache);
  }

  void onlyUncomputedTokensCanBeDropped() {
    PageCache cache(small_cache(4));
    const auto admitted = cache.admit({run_of(6, 10), 4});
    cache.mark_computed(admitted->sequence, 6);
    cache.append(admitted->sequence, run_of(2, 50));
    QVERIFY_THROWS_EXCEPTION(std::out_of_range, cache.truncate(admitted->sequence, 5));
    QVERIFY_THROWS_EXCEPTION(std::out_of_range, cache.truncate(admitted->sequence, 9));
    cache.truncate(admitted->sequence, 8);  // nothing to drop
    cache.truncate(admitted->sequence, 6);
    QCOMPARE(cache.tokens(admitted->sequence).size(), std::size_t(6));
    QCOMPARE(cache.stats().generated_tokens, std::int64_t(0));
    QUIRE_VERIFY_INVARIANTS(cache);
  }

  void anEvictedPageWrittenForDraftsDoesNotComeBack() {
    PageCache cache(small_cache(3, ReservationPolicy::OnDemand));
    // A cached page of 4 tokens, then a sequence whose drafts evict it.
    const auto first = cache.admit({run_of(5, 100), 0});
    cache.mark_computed(first->sequence, 5);
    cache.release(first->sequence);
    const auto second = cache.admit({run_of(4, 500), 0});
    cache.mark_computed(second->sequence, 4);
    QCOMPARE(cache.append(second->sequence, run_of(5, 900)).status, AppendStatus::Appended);
    QVERIFY(cache.stats().evictions > 0);
    // Every draft rejected: the pages they were written into forget.
    cache.truncate(second->sequence, 4);
    QUIRE_VERIFY_INVARIANTS(cache);
    cache.release(second->sequence);
    const auto again = cache.admit({run_of(5, 100), 0});
    QCOMPARE(again->cached_tokens, 0);
    QUIRE_VERIFY_INVARIANTS(cache);
  }

  void sharedSealedPagesAreUntouched() {
    PageCache cache(small_cache(8));
    const auto first = cache.admit({run_of(9, 10), 8});
    cache.mark_computed(first->sequence, 9);
    const auto second = cache.admit({run_of(9, 10), 8});
    QCOMPARE(second->cached_tokens, 8);
    const PageIndex first_page = cache.page_table(second->sequence).front();
    const PageRecord& record = cache.page(first_page);
    QCOMPARE(record.refs, 2);
    const PageHash hash = record.identity.hash;
    cache.mark_computed(second->sequence, 9);
    cache.append(second->sequence, run_of(6, 70));
    cache.truncate(second->sequence, 10);
    QVERIFY(cache.page(first_page).identity.hashed);
    QVERIFY(cache.page(first_page).identity.hash == hash);
    QCOMPARE(cache.page(first_page).identity.valid, 4);
    QCOMPARE(cache.page(first_page).refs, 2);
    QUIRE_VERIFY_INVARIANTS(cache);
  }

  void bothPoolsDropTheSameTokens() {
    CacheConfig config = small_cache(16);
    config.layer_window = 8;
    config.window_pages = 8;
    config.max_step_tokens = 8;
    PageCache cache(config);
    const auto admitted = cache.admit({run_of(6, 10), 10});
    cache.mark_computed(admitted->sequence, 6);
    cache.append(admitted->sequence, run_of(5, 40));
    cache.truncate(admitted->sequence, 7);
    QCOMPARE(cache.tokens(admitted->sequence).size(), std::size_t(7));
    QCOMPARE(cache.window_pool()->tokens(cache.window_sequence(admitted->sequence)).size(),
             std::size_t(7));
    QUIRE_VERIFY_INVARIANTS(cache);
  }
};

QUIRE_TEST(PageCacheTruncateTest)
#include "test_page_cache_truncate.moc"
