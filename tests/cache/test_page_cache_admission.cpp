// Admission: page sharing, revival, the last-token rule, partial-page copies,
// eviction order and the transaction guarantee. Pages of 4 tokens keep the
// arithmetic readable.

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

class PageCacheAdmissionTest : public QObject {
  Q_OBJECT

 private slots:
  void startsWithEveryPageFree() {
    PageCache cache(small_cache(8));
    const CacheStats stats = cache.stats();
    QCOMPARE(stats.total_pages, 8);
    QCOMPARE(stats.free_pages, 8);
    QCOMPARE(stats.referenced_pages + stats.cached_pages + stats.shared_pages, 0);
    QCOMPARE(stats.hit_rate(), 0.0);
    QUIRE_VERIFY_INVARIANTS(cache);
  }

  void admitsIntoTheLowestFreePages() {
    PageCache cache(small_cache(8));
    const auto admission = cache.admit({run_of(10, 100), 0});
    QVERIFY(admission);
    QCOMPARE(admission->sequence, SequenceId(1));
    QCOMPARE(table_of(cache, 1), (std::vector<PageIndex>{0, 1, 2}));
    QCOMPARE(admission->compute, (std::vector<TokenRange>{{0, 10}}));
    QCOMPARE(admission->cached_tokens, 0);
    QVERIFY(admission->instructions.empty());
    // The two pages before the one holding the last token are hashed right away.
    QVERIFY(cache.page(0).identity.hashed);
    QVERIFY(cache.page(1).identity.hashed);
    QVERIFY(!cache.page(2).identity.hashed);
    QCOMPARE(cache.page(1).identity.hash, hash_full_pages(run_of(8, 100), 4)[1]);
    const CacheStats stats = cache.stats();
    QCOMPARE(stats.referenced_pages, 3);
    QCOMPARE(stats.free_pages, 5);
    QCOMPARE(stats.prompt_tokens, qint64(10));
    QCOMPARE(stats.computed_tokens, qint64(10));
    QUIRE_VERIFY_INVARIANTS(cache);
  }

  void sharesFullPagesOfARunningSequence() {
    PageCache cache(small_cache(8));
    ShadowEngine engine(cache);
    const auto first = cache.admit({run_of(10, 100), 0});
    engine.prefill(*first);

    const auto second = cache.admit({run_of(10, 100), 0});
    QVERIFY(second);
    QCOMPARE(table_of(cache, second->sequence), (std::vector<PageIndex>{0, 1, 3}));
    // The last page copies the one token it may take from the first sequence's
    // last page; the last prompt token itself is computed.
    QCOMPARE(second->instructions.copies, (std::vector<PageCopy>{{2, 3, 1}}));
    QCOMPARE(second->compute, (std::vector<TokenRange>{{9, 10}}));
    QCOMPARE(second->cached_tokens, 9);
    QCOMPARE(cache.page(0).refs, 2);
    QCOMPARE(cache.stats().shared_pages, 2);

    engine.prefill(*second);
    QUIRE_VERIFY_EMPTY(engine.verify_sequence(first->sequence));
    QUIRE_VERIFY_EMPTY(engine.verify_sequence(second->sequence));
    const CacheStats stats = cache.stats();
    QCOMPARE(stats.reused_tokens, qint64(8));
    QCOMPARE(stats.copied_tokens, qint64(1));
    QCOMPARE(stats.computed_tokens, qint64(11));
    QCOMPARE(stats.hit_rate(), 9.0 / 20.0);
    QUIRE_VERIFY_INVARIANTS(cache);
  }

  void lastPromptTokenIsAlwaysComputed() {
    PageCache cache(small_cache(8));
    ShadowEngine engine(cache);
    const auto first = cache.admit({run_of(8, 100), 0});
    engine.prefill(*first);
    cache.release(first->sequence);
    QVERIFY(cache.page(1).identity.hashed);  // hashed once its K/V were written

    // The same 8 tokens again: page 0 is revived, page 1 holds the last token,
    // so it is not taken by hash; 3 of its tokens are copied, 1 is computed.
    const auto again = cache.admit({run_of(8, 100), 0});
    QCOMPARE(table_of(cache, again->sequence), (std::vector<PageIndex>{0, 2}));
    QCOMPARE(again->instructions.copies, (std::vector<PageCopy>{{1, 2, 3}}));
    QCOMPARE(again->compute, (std::vector<TokenRange>{{7, 8}}));
    QCOMPARE(again->cached_tokens, 7);

    // Once computed, the new page is a duplicate of page 1 and is swapped for it.
    engine.prefill(*again);
    QCOMPARE(table_of(cache, again->sequence), (std::vector<PageIndex>{0, 1}));
    QCOMPARE(cache.page(2).state(), PageState::Free);
    QCOMPARE(cache.stats().dedup_switches, qint64(1));
    QUIRE_VERIFY_EMPTY(engine.verify_sequence(again->sequence));
    QUIRE_VERIFY_INVARIANTS(cache);
  }

  void revivesCachedPagesAfterRelease() {
    PageCache cache(small_cache(8));
    ShadowEngine engine(cache);
    const auto first = cache.admit({run_of(10, 100), 0});
    engine.prefill(*first);
    cache.release(first->sequence);
    CacheStats stats = cache.stats();
    QCOMPARE(stats.cached_pages, 3);  // two hashed pages and the partial last page
    QCOMPARE(stats.free_pages, 5);
    QCOMPARE(stats.referenced_pages, 0);

    const auto again = cache.admit({run_of(10, 100), 0});
    QCOMPARE(table_of(cache, again->sequence), (std::vector<PageIndex>{0, 1, 3}));
    QCOMPARE(again->instructions.copies, (std::vector<PageCopy>{{2, 3, 1}}));
    QCOMPARE(again->cached_tokens, 9);
    QCOMPARE(again->evicted_pages, 0);
    engine.prefill(*again);
    QUIRE_VERIFY_EMPTY(engine.verify_sequence(again->sequence));
    stats = cache.stats();
    QCOMPARE(stats.reused_tokens, qint64(8));
    QCOMPARE(stats.evictions, qint64(0));
    QUIRE_VERIFY_INVARIANTS(cache);
  }

  void aNewTurnCopiesThePreviousTurnsPartialPage() {
    // Turn 1 ends mid-page; turn 2's prompt extends it. The page that was
    // partial is full in turn 2, so no hash can match it, but its tokens are
    // copied from the cached partial page instead of being recomputed.
    PageCache cache(small_cache(8));
    ShadowEngine engine(cache);
    const std::vector<TokenId> turn1 = run_of(6, 100);
    const auto first = cache.admit({turn1, 0});
    engine.prefill(*first);
    cache.release(first->sequence);

    const std::vector<TokenId> turn2 = joined(turn1, run_of(5, 500));
    const auto second = cache.admit({turn2, 0});
    QCOMPARE(second->instructions.copies, (std::vector<PageCopy>{{1, 2, 2}}));
    QCOMPARE(second->compute, (std::vector<TokenRange>{{6, 11}}));
    QCOMPARE(second->cached_tokens, 6);
    engine.prefill(*second);
    QUIRE_VERIFY_EMPTY(engine.verify_sequence(second->sequence));
    QUIRE_VERIFY_INVARIANTS(cache);
  }

  void aCopyNeverKeepsARequestOut() {
    // Three pages: turn 2 needs all of them. Copying the partial page would
    // pin it as a source and leave one page too few, so the copy is dropped
    // and its tokens are computed instead of the request waiting forever.
    PageCache cache(small_cache(3));
    ShadowEngine engine(cache);
    const std::vector<TokenId> turn1 = run_of(6, 100);
    const auto first = cache.admit({turn1, 0});
    engine.prefill(*first);
    cache.release(first->sequence);

    const std::vector<TokenId> turn2 = joined(turn1, run_of(5, 500));
    const AdmissionPlan plan = cache.prepare({turn2, 0});
    QCOMPARE(plan.status(), AdmissionStatus::Fits);
    const auto second = cache.commit(AdmissionPlan(plan));
    QCOMPARE(second.instructions.copies, std::vector<PageCopy>{});
    QCOMPARE(second.compute, (std::vector<TokenRange>{{4, 11}}));
    QCOMPARE(second.cached_tokens, 4);
    engine.prefill(second);
    QUIRE_VERIFY_EMPTY(engine.verify_sequence(second.sequence));
    QUIRE_VERIFY_INVARIANTS(cache);
  }

  void freePagesGoBeforeEvictionThenLeavesFirst() {
    PageCache cache(small_cache(6));
    ShadowEngine engine(cache);
    const auto a = cache.admit({run_of(13, 100), 0});  // pages 0..3, page 3 holds 1 token
    engine.prefill(*a);
    cache.release(a->sequence);

    // Needs 3 pages: the 2 free ones, then one eviction. Page 3 is the only
    // leaf of a's chain (it continues page 2), so it goes.
    const auto b = cache.admit({run_of(9, 500), 0});
    QCOMPARE(table_of(cache, b->sequence), (std::vector<PageIndex>{4, 5, 3}));
    QCOMPARE(b->evicted_pages, 1);
    engine.prefill(*b);
    cache.release(b->sequence);

    // Two more pages: a's chain is older, so its tail goes, leaf by leaf, and
    // its first page survives.
    const auto c = cache.admit({run_of(5, 900), 0});
    QCOMPARE(table_of(cache, c->sequence), (std::vector<PageIndex>{2, 1}));
    QCOMPARE(cache.page(0).state(), PageState::Cached);
    QCOMPARE(cache.stats().evictions, qint64(3));
    engine.prefill(*c);
    QUIRE_VERIFY_EMPTY(engine.verify_sequence(c->sequence));
    QUIRE_VERIFY_EMPTY(engine.verify_cached_pages());
    QUIRE_VERIFY_INVARIANTS(cache);
  }

  void refusedRequestLeavesTheCacheUntouched() {
    PageCache cache(small_cache(4));
    const auto held = cache.admit({run_of(12, 100), 0});  // 3 of the 4 pages
    QVERIFY(held);
    const CacheStats before = cache.stats();
    const std::vector<PageInfo> pages_before = cache.pages();

    AdmissionPlan refused;
    QVERIFY(!cache.admit({run_of(9, 500), 0}, &refused));
    QCOMPARE(refused.status(), AdmissionStatus::WaitForPages);
    QCOMPARE(refused.pages_needed(), 3);
    QCOMPARE(refused.pages_available(), 1);
    QVERIFY_THROWS_EXCEPTION(std::logic_error, cache.commit(refused));

    const CacheStats after = cache.stats();
    QCOMPARE(after.free_pages, before.free_pages);
    QCOMPARE(after.referenced_pages, before.referenced_pages);
    QCOMPARE(after.prompt_tokens, before.prompt_tokens);
    const std::vector<PageInfo> pages_after = cache.pages();
    for (std::size_t i = 0; i < pages_after.size(); ++i) {
      QCOMPARE(pages_after[i].state, pages_before[i].state);
      QCOMPARE(pages_after[i].hash, pages_before[i].hash);
      QCOMPARE(pages_after[i].last_access, pages_before[i].last_access);
    }
    QCOMPARE(cache.sequences(), (std::vector<SequenceId>{held->sequence}));
    QUIRE_VERIFY_INVARIANTS(cache);
  }

  void requestLargerThanTheCacheNeverFits() {
    PageCache cache(small_cache(4));
    AdmissionPlan plan = cache.prepare({run_of(17, 1), 0});
    QCOMPARE(plan.status(), AdmissionStatus::NeverFits);
    QVERIFY(plan.reason().find("17 tokens") != std::string::npos);
    QVERIFY(plan.reason().find("16 tokens") != std::string::npos);
    // The budget for new tokens counts too.
    QCOMPARE(cache.prepare({run_of(10, 1), 7}).status(), AdmissionStatus::NeverFits);
    QCOMPARE(cache.prepare({run_of(10, 1), 6}).status(), AdmissionStatus::Fits);
    QCOMPARE(cache.prepare({{}, 4}).status(), AdmissionStatus::NeverFits);
  }

  void stalePlanIsRefused() {
    PageCache cache(small_cache(8));
    AdmissionPlan plan = cache.prepare({run_of(6, 100), 0});
    QVERIFY(plan.fits());
    QVERIFY(cache.admit({run_of(6, 300), 0}));
    QVERIFY_THROWS_EXCEPTION(std::logic_error, cache.commit(std::move(plan)));
    QCOMPARE(cache.stats().referenced_pages, 2);
    QUIRE_VERIFY_INVARIANTS(cache);
  }

  void reserveOnAdmissionTakesPagesForEveryNewToken() {
    PageCache cache(small_cache(8));
    const auto admission = cache.admit({run_of(5, 100), 7});  // 12 tokens: 3 pages
    QCOMPARE(table_of(cache, admission->sequence), (std::vector<PageIndex>{0, 1, 2}));

    CacheConfig on_demand = small_cache(8);
    on_demand.reservation = ReservationPolicy::OnDemand;
    PageCache lazy(on_demand);
    const auto lazy_admission = lazy.admit({run_of(5, 100), 7});
    QCOMPARE(table_of(lazy, lazy_admission->sequence), (std::vector<PageIndex>{0, 1}));
  }
};

QUIRE_TEST(PageCacheAdmissionTest)
#include "test_page_cache_admission.moc"
