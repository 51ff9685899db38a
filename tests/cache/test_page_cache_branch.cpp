// Branching a live sequence: the branch shares the source's written full
// pages and copies only its open page; both then grow apart without either
// writing a page the other reads. Also: a page still being computed is never
// shared by an admission. Pages of 4 tokens keep the arithmetic readable.

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
using quire::test::tokens_of;

class PageCacheBranchTest : public QObject {
  Q_OBJECT

 private slots:
  void aBranchSharesFullPagesAndCopiesTheOpenOne() {
    PageCache cache(small_cache(8, ReservationPolicy::OnDemand));
    ShadowEngine engine(cache);
    const auto source = cache.admit({run_of(10, 100), 0});
    engine.prefill(*source);

    const auto branch = cache.branch({source->sequence});
    QVERIFY(branch);
    QCOMPARE(table_of(cache, branch->sequence), (std::vector<PageIndex>{0, 1, 3}));
    QCOMPARE(branch->instructions.copies, (std::vector<PageCopy>{{2, 3, 2}}));
    QVERIFY(branch->instructions.saves.empty() && branch->instructions.restores.empty());
    QVERIFY(branch->compute.empty());
    QCOMPARE(branch->cached_tokens, 10);
    QCOMPARE(cache.computed(branch->sequence), 10);
    QCOMPARE(tokens_of(cache, branch->sequence), run_of(10, 100));
    QCOMPARE(cache.page(0).refs, 2);
    QCOMPARE(cache.page(1).refs, 2);
    QCOMPARE(cache.page(2).refs, 1);
    QCOMPARE(cache.page(3).refs, 1);
    CacheStats stats = cache.stats();
    QCOMPARE(stats.shared_pages, 2);
    QCOMPARE(stats.referenced_pages, 4);
    QCOMPARE(stats.branches, qint64(1));
    QCOMPARE(stats.prompt_tokens, qint64(20));
    QCOMPARE(stats.reused_tokens, qint64(8));
    QCOMPARE(stats.copied_tokens, qint64(2));
    QCOMPARE(stats.computed_tokens, qint64(10));
    QUIRE_VERIFY_INVARIANTS(cache);

    // Each grows its own way, across a page boundary; neither disturbs the other.
    engine.execute(branch->instructions);
    for (int i = 0; i < 5; ++i) {
      QCOMPARE(engine.decode(source->sequence, 200 + i).status, AppendStatus::Appended);
      QCOMPARE(engine.decode(branch->sequence, 300 + i).status, AppendStatus::Appended);
      QUIRE_VERIFY_EMPTY(engine.verify_sequence(source->sequence));
      QUIRE_VERIFY_EMPTY(engine.verify_sequence(branch->sequence));
      QUIRE_VERIFY_INVARIANTS(cache);
    }
    QCOMPARE(tokens_of(cache, branch->sequence), joined(run_of(10, 100), run_of(5, 300)));
    QCOMPARE(cache.page(0).refs, 2);
    QCOMPARE(cache.stats().shared_pages, 2);

    // Released in either order, every page is back to cached, none referenced.
    cache.release(source->sequence);
    QUIRE_VERIFY_EMPTY(engine.verify_sequence(branch->sequence));
    QUIRE_VERIFY_INVARIANTS(cache);
    cache.release(branch->sequence);
    QUIRE_VERIFY_INVARIANTS(cache);
    QUIRE_VERIFY_EMPTY(engine.verify_cached_pages());
    stats = cache.stats();
    QCOMPARE(stats.referenced_pages, 0);
    QCOMPARE(stats.shared_pages, 0);
    QCOMPARE(stats.sequences, 0);
    QCOMPARE(stats.free_pages + stats.cached_pages, 8);
  }

  void aBranchOfNPagesCopiesAtMostOnePage_data() {
    QTest::addColumn<int>("length");
    QTest::addColumn<int>("copied");
    QTest::newRow("on a page boundary") << 24 << 0;
    QTest::newRow("one token into a page") << 25 << 1;
    QTest::newRow("three tokens into a page") << 27 << 3;
  }

  void aBranchOfNPagesCopiesAtMostOnePage() {
    QFETCH(int, length);
    QFETCH(int, copied);
    PageCache cache(small_cache(16, ReservationPolicy::OnDemand));
    ShadowEngine engine(cache);
    const auto source = cache.admit({run_of(length, 100), 0});
    engine.prefill(*source);
    const CacheStats before = cache.stats();

    const auto branch = cache.branch({source->sequence});
    QVERIFY(branch);
    QCOMPARE(branch->instructions.copies.size(), std::size_t(copied > 0 ? 1 : 0));
    const CacheStats after = cache.stats();
    QCOMPARE(after.copied_tokens - before.copied_tokens, qint64(copied));
    QCOMPARE(after.reused_tokens - before.reused_tokens, qint64(24));
    QCOMPARE(after.computed_tokens, before.computed_tokens);
    QCOMPARE(after.free_pages, before.free_pages - (copied > 0 ? 1 : 0));
    QCOMPARE(after.shared_pages, 6);
    engine.execute(branch->instructions);
    QUIRE_VERIFY_EMPTY(engine.verify_sequence(branch->sequence));
    // The next token of each goes to a page of its own.
    QCOMPARE(engine.decode(branch->sequence, 7).status, AppendStatus::Appended);
    QCOMPARE(engine.decode(source->sequence, 8).status, AppendStatus::Appended);
    QUIRE_VERIFY_EMPTY(engine.verify_sequence(source->sequence));
    QUIRE_VERIFY_EMPTY(engine.verify_sequence(branch->sequence));
    QUIRE_VERIFY_INVARIANTS(cache);
  }

  void aBranchFromAnEarlierPointKeepsOnlyThatPrefix() {
    // Editing message 2 of a chat: the branch starts from the tokens before it.
    PageCache cache(small_cache(8, ReservationPolicy::OnDemand));
    ShadowEngine engine(cache);
    const auto source = cache.admit({run_of(10, 100), 0});
    engine.prefill(*source);

    const auto branch = cache.branch({source->sequence, 6, 0});
    QVERIFY(branch);
    QCOMPARE(table_of(cache, branch->sequence), (std::vector<PageIndex>{0, 3}));
    QCOMPARE(branch->instructions.copies, (std::vector<PageCopy>{{1, 3, 2}}));
    QCOMPARE(tokens_of(cache, branch->sequence), run_of(6, 100));
    QCOMPARE(cache.computed(branch->sequence), 6);
    engine.execute(branch->instructions);
    for (int i = 0; i < 4; ++i)
      QCOMPARE(engine.decode(branch->sequence, 400 + i).status, AppendStatus::Appended);
    QUIRE_VERIFY_EMPTY(engine.verify_sequence(source->sequence));
    QUIRE_VERIFY_EMPTY(engine.verify_sequence(branch->sequence));
    QUIRE_VERIFY_INVARIANTS(cache);

    // Branching the branch from its very first token.
    const auto twig = cache.branch({branch->sequence, 1, 0});
    QVERIFY(twig);
    QCOMPARE(twig->instructions.copies.size(), std::size_t(1));
    QCOMPARE(twig->instructions.copies.front().tokens, 1);
    engine.execute(twig->instructions);
    QUIRE_VERIFY_EMPTY(engine.verify_sequence(twig->sequence));
    QUIRE_VERIFY_INVARIANTS(cache);
  }

  void whatTheSourceHasNotComputedIsLeftToCompute() {
    PageCache cache(small_cache(8, ReservationPolicy::OnDemand));
    ShadowEngine engine(cache);
    const auto source = cache.admit({run_of(10, 100), 0});
    engine.compute(source->sequence, {0, 5});

    const auto branch = cache.branch({source->sequence});
    QVERIFY(branch);
    // Page 0 is written and shared; of page 1 one token is written and copied;
    // the rest of the prompt the branch computes in pages of its own.
    const std::vector<PageIndex> table = table_of(cache, branch->sequence);
    QCOMPARE(table.front(), PageIndex(0));
    QCOMPARE(branch->instructions.copies, (std::vector<PageCopy>{{1, table[1], 1}}));
    QCOMPARE(branch->compute, (std::vector<TokenRange>{{5, 10}}));
    QCOMPARE(branch->cached_tokens, 5);
    QCOMPARE(cache.page(1).refs, 1);
    QCOMPARE(cache.page(2).refs, 1);
    engine.prefill(*branch);
    engine.compute(source->sequence, {5, 10});
    QUIRE_VERIFY_EMPTY(engine.verify_sequence(source->sequence));
    QUIRE_VERIFY_EMPTY(engine.verify_sequence(branch->sequence));
    QUIRE_VERIFY_INVARIANTS(cache);
    // Page 1 exists twice while both run (the branch's copy is an unindexed
    // duplicate); once the source ends, its page is the one kept by hash.
    QVERIFY(table_of(cache, branch->sequence)[1] != PageIndex(1));
    cache.release(source->sequence);
    cache.release(branch->sequence);
    QUIRE_VERIFY_INVARIANTS(cache);
    QUIRE_VERIFY_EMPTY(engine.verify_cached_pages());
    QCOMPARE(cache.page(1).state(), PageState::Cached);
    QCOMPARE(cache.page(table[1]).state(), PageState::Free);
  }

  void underReserveOnAdmissionTheBranchTakesItsDecodePages() {
    PageCache cache(small_cache(8, ReservationPolicy::ReserveOnAdmission));
    ShadowEngine engine(cache);
    const auto source = cache.admit({run_of(10, 100), 2});
    engine.prefill(*source);
    // 10 + 5 tokens: pages 0 and 1 shared, the open page and one more its own.
    const auto branch = cache.branch({source->sequence, -1, 5});
    QVERIFY(branch);
    QCOMPARE(table_of(cache, branch->sequence).size(), std::size_t(4));
    QCOMPARE(cache.stats().free_pages, 8 - 3 - 2);
    engine.execute(branch->instructions);
    for (int i = 0; i < 5; ++i)
      QCOMPARE(engine.decode(branch->sequence, 500 + i).status, AppendStatus::Appended);
    QUIRE_VERIFY_EMPTY(engine.verify_sequence(branch->sequence));
    QUIRE_VERIFY_INVARIANTS(cache);
  }

  void aBranchThatDoesNotFitChangesNothing() {
    PageCache cache(small_cache(3, ReservationPolicy::OnDemand));
    ShadowEngine engine(cache);
    const auto source = cache.admit({run_of(10, 100), 0});
    engine.prefill(*source);
    const CacheStats before = cache.stats();
    const std::vector<PageInfo> pages_before = cache.pages();

    AdmissionPlan refused;
    QVERIFY(!cache.branch({source->sequence}, &refused));
    QCOMPARE(refused.status(), AdmissionStatus::WaitForPages);
    QCOMPARE(refused.pages_needed(), 1);
    QCOMPARE(refused.pages_available(), 0);
    QVERIFY(!refused.reason().empty());
    QCOMPARE(cache.stats().referenced_pages, before.referenced_pages);
    QCOMPARE(cache.stats().branches, qint64(0));
    QCOMPARE(cache.pages().size(), pages_before.size());
    for (std::size_t i = 0; i < pages_before.size(); ++i)
      QCOMPARE(cache.pages()[i].refs, pages_before[i].refs);
    QUIRE_VERIFY_INVARIANTS(cache);

    // On a page boundary the branch needs no page of its own and fits.
    const auto aligned = cache.branch({source->sequence, 8, 0});
    QVERIFY(aligned);
    QCOMPARE(table_of(cache, aligned->sequence), (std::vector<PageIndex>{0, 1}));
    QUIRE_VERIFY_INVARIANTS(cache);
  }

  void withASlidingWindowTheBranchHoldsOnlyItsWindow() {
    // Window 5: a query at 14 reads keys from 10 on, so pages 0 and 1 are not
    // the branch's; page 2 is shared, page 3's two tokens copied.
    CacheConfig config = small_cache(12, ReservationPolicy::OnDemand);
    config.window = 5;
    config.max_step_tokens = 4;
    PageCache cache(config);
    ShadowEngine engine(cache);
    const auto source = cache.admit({run_of(14, 100), 0});
    engine.prefill(*source);
    const auto branch = cache.branch({source->sequence});
    QVERIFY(branch);
    QCOMPARE(table_of(cache, branch->sequence),
             (std::vector<PageIndex>{kNoPage, kNoPage, table_of(cache, source->sequence)[2],
                                     table_of(cache, branch->sequence)[3]}));
    QCOMPARE(branch->instructions.copies.size(), std::size_t(1));
    QCOMPARE(branch->instructions.copies.front().tokens, 2);
    QCOMPARE(branch->cached_tokens, 14);
    engine.execute(branch->instructions);
    for (int i = 0; i < 9; ++i) {
      QCOMPARE(engine.decode(source->sequence, 200 + i).status, AppendStatus::Appended);
      QCOMPARE(engine.decode(branch->sequence, 300 + i).status, AppendStatus::Appended);
      QUIRE_VERIFY_EMPTY(engine.verify_sequence(source->sequence));
      QUIRE_VERIFY_EMPTY(engine.verify_sequence(branch->sequence));
      QUIRE_VERIFY_INVARIANTS(cache);
    }
    cache.release(source->sequence);
    cache.release(branch->sequence);
    QUIRE_VERIFY_INVARIANTS(cache);
    QCOMPARE(cache.stats().referenced_pages, 0);
  }

  void badBranchesThrow() {
    PageCache cache(small_cache(8, ReservationPolicy::OnDemand));
    const auto source = cache.admit({run_of(10, 100), 0});
    QVERIFY_THROWS_EXCEPTION(std::out_of_range, cache.branch({source->sequence + 1}));
    QVERIFY_THROWS_EXCEPTION(std::out_of_range, cache.branch({source->sequence, 11, 0}));
    QVERIFY_THROWS_EXCEPTION(std::out_of_range, cache.branch({source->sequence, 0, 0}));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, cache.branch({source->sequence, 5, -1}));
    QUIRE_VERIFY_INVARIANTS(cache);
  }

  void aPageStillBeingComputedIsNotShared() {
    // Two chats with the same opening admitted in one step: the second must
    // not compute into the first's pages, which both would then hold.
    PageCache cache(small_cache(8, ReservationPolicy::OnDemand));
    ShadowEngine engine(cache);
    const auto first = cache.admit({run_of(10, 100), 0});
    const auto second = cache.admit({run_of(10, 100), 0});
    QVERIFY(first && second);
    QCOMPARE(table_of(cache, second->sequence), (std::vector<PageIndex>{3, 4, 5}));
    QCOMPARE(second->compute, (std::vector<TokenRange>{{0, 10}}));
    QCOMPARE(cache.stats().shared_pages, 0);
    engine.prefill(*first);
    engine.prefill(*second);
    QUIRE_VERIFY_EMPTY(engine.verify_sequence(first->sequence));
    QUIRE_VERIFY_EMPTY(engine.verify_sequence(second->sequence));
    QUIRE_VERIFY_INVARIANTS(cache);
    // The second's full pages are unindexed duplicates: when it ends they
    // are freed (its partial page stays cached as a copy source), and the
    // first's are the ones a later request finds.
    cache.release(second->sequence);
    QUIRE_VERIFY_INVARIANTS(cache);
    QCOMPARE(cache.page(3).state(), PageState::Free);
    QCOMPARE(cache.page(4).state(), PageState::Free);
    const auto third = cache.admit({run_of(10, 100), 0});
    QCOMPARE(table_of(cache, third->sequence).front(), PageIndex(0));
    QCOMPARE(cache.stats().shared_pages, 2);
  }
};

QUIRE_TEST(PageCacheBranchTest)
#include "test_page_cache_branch.moc"
