// Decode-time growth: hashing pages as they fill, deduplication, reservation
// policies, preemption, and giving back identities of pages never written.

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

class PageCacheGrowthTest : public QObject {
  Q_OBJECT

 private slots:
  void fullPagesAreHashedAndDuplicatesShared() {
    PageCache cache(small_cache(8, ReservationPolicy::ReserveOnAdmission));
    ShadowEngine engine(cache);
    const auto a = cache.admit({run_of(6, 100), 6});
    engine.prefill(*a);
    const auto b = cache.admit({run_of(6, 100), 6});
    QCOMPARE(table_of(cache, b->sequence), (std::vector<PageIndex>{0, 3, 4}));
    engine.prefill(*b);

    // Both sequences generate the same two tokens; page 1 of each fills.
    for (const TokenId token : {7, 8}) {
      QCOMPARE(engine.decode(a->sequence, token).status, AppendStatus::Appended);
      QCOMPARE(engine.decode(b->sequence, token).status, AppendStatus::Appended);
    }
    const PageHash expected = hash_full_pages(joined(run_of(6, 100), {7, 8}), 4)[1];
    QVERIFY(cache.page(1).identity.hashed);
    QCOMPARE(cache.page(1).identity.hash, expected);
    // b's copy of that page was swapped for a's and freed.
    QCOMPARE(table_of(cache, b->sequence), (std::vector<PageIndex>{0, 1, 4}));
    QCOMPARE(cache.page(3).state(), PageState::Free);
    const CacheStats stats = cache.stats();
    QCOMPARE(stats.dedup_switches, qint64(1));
    QCOMPARE(stats.shared_pages, 2);
    QCOMPARE(stats.generated_tokens, qint64(4));
    QUIRE_VERIFY_EMPTY(engine.verify_sequence(a->sequence));
    QUIRE_VERIFY_EMPTY(engine.verify_sequence(b->sequence));
    QUIRE_VERIFY_INVARIANTS(cache);
  }

  void reservedPagesNeverWrittenGetTheirIdentityBack() {
    PageCache cache(small_cache(4, ReservationPolicy::ReserveOnAdmission));
    ShadowEngine engine(cache);
    const auto x = cache.admit({run_of(8, 100), 0});
    engine.prefill(*x);
    cache.release(x->sequence);
    const PageHash second_page = cache.page(1).identity.hash;

    // y reserves 3 pages: the 2 free ones and x's last page, evicted.
    const auto y = cache.admit({run_of(3, 500), 9});
    QCOMPARE(table_of(cache, y->sequence), (std::vector<PageIndex>{2, 3, 1}));
    QCOMPARE(y->evicted_pages, 1);
    engine.prefill(*y);
    QCOMPARE(engine.decode(y->sequence, 42).status, AppendStatus::Appended);
    // y stops early: pages 3 and 1 were never written.
    cache.release(y->sequence);
    QCOMPARE(cache.page(1).state(), PageState::Cached);
    QCOMPARE(cache.page(1).identity.hash, second_page);
    QCOMPARE(cache.page(3).state(), PageState::Free);

    // x's conversation continues and finds both of its pages again.
    const auto x2 = cache.admit({joined(run_of(8, 100), {9}), 0});
    QCOMPARE(table_of(cache, x2->sequence), (std::vector<PageIndex>{0, 1, 3}));
    QCOMPARE(x2->cached_tokens, 8);
    engine.prefill(*x2);
    QUIRE_VERIFY_EMPTY(engine.verify_sequence(x2->sequence));
    QUIRE_VERIFY_INVARIANTS(cache);
  }

  void onDemandTakesPagesAsTheSequenceGrows() {
    PageCache cache(small_cache(4, ReservationPolicy::OnDemand));
    ShadowEngine engine(cache);
    const auto a = cache.admit({run_of(3, 100), 10});
    QCOMPARE(table_of(cache, a->sequence), (std::vector<PageIndex>{0}));
    engine.prefill(*a);
    QCOMPARE(engine.decode(a->sequence, 1).status, AppendStatus::Appended);
    QCOMPARE(table_of(cache, a->sequence), (std::vector<PageIndex>{0}));
    QCOMPARE(engine.decode(a->sequence, 2).status, AppendStatus::Appended);
    QCOMPARE(table_of(cache, a->sequence), (std::vector<PageIndex>{0, 1}));
    QUIRE_VERIFY_EMPTY(engine.verify_sequence(a->sequence));
    QUIRE_VERIFY_INVARIANTS(cache);
  }

  void theYoungestSequenceIsPreemptedAndResumesMostlyFromCache() {
    PageCache cache(small_cache(6, ReservationPolicy::OnDemand));
    ShadowEngine engine(cache);
    const auto a = cache.admit({run_of(4, 100), 12});
    engine.prefill(*a);
    const std::vector<TokenId> c_tokens = run_of(12, 300);
    const auto c = cache.admit({c_tokens, 4});
    engine.prefill(*c);
    QCOMPARE(table_of(cache, c->sequence), (std::vector<PageIndex>{1, 2, 3}));

    for (TokenId token = 0; token < 8; ++token) {
      QCOMPARE(engine.decode(a->sequence, token).status, AppendStatus::Appended);
    }
    QCOMPARE(cache.stats().free_pages, 0);
    // a needs a page and none is free or cached: c, the youngest, is preempted.
    const AppendResult result = engine.decode(a->sequence, 99);
    QCOMPARE(result.status, AppendStatus::Appended);
    QCOMPARE(result.preempted, (std::vector<SequenceId>{c->sequence}));
    QVERIFY(!cache.contains(c->sequence));
    QCOMPARE(cache.stats().preemptions, qint64(1));
    QUIRE_VERIFY_EMPTY(engine.verify_sequence(a->sequence));

    // c cannot come back while a holds the pages it would need...
    QCOMPARE(cache.prepare({c_tokens, 4}).status(), AdmissionStatus::WaitForPages);
    cache.release(a->sequence);
    // ...and once a has ended, c resumes with its first two pages from cache.
    const auto resumed = cache.admit({c_tokens, 4});
    QVERIFY(resumed);
    QCOMPARE(resumed->cached_tokens, 8);
    QCOMPARE(resumed->compute, (std::vector<TokenRange>{{8, 12}}));
    engine.prefill(*resumed);
    QUIRE_VERIFY_EMPTY(engine.verify_sequence(resumed->sequence));
    QUIRE_VERIFY_INVARIANTS(cache);
  }

  void aSequenceThatIsTheYoungestPreemptsItself() {
    PageCache cache(small_cache(2, ReservationPolicy::OnDemand));
    ShadowEngine engine(cache);
    const auto old = cache.admit({run_of(4, 100), 4});
    engine.prefill(*old);
    const auto young = cache.admit({run_of(4, 200), 4});
    engine.prefill(*young);
    const AppendResult result = engine.decode(young->sequence, 5);
    QCOMPARE(result.status, AppendStatus::Preempted);
    QCOMPARE(result.preempted, (std::vector<SequenceId>{young->sequence}));
    QVERIFY(cache.contains(old->sequence));
    QCOMPARE(cache.page(1).state(), PageState::Cached);
    QUIRE_VERIFY_INVARIANTS(cache);
  }

  void reservedPolicyReportsNoSpaceInsteadOfPreempting() {
    PageCache cache(small_cache(2, ReservationPolicy::ReserveOnAdmission));
    ShadowEngine engine(cache);
    const auto a = cache.admit({run_of(4, 100), 0});
    engine.prefill(*a);
    const auto b = cache.admit({run_of(4, 200), 0});
    engine.prefill(*b);
    const CacheStats before = cache.stats();
    const TokenId token[] = {7};
    const AppendResult result = cache.append(a->sequence, token);
    QCOMPARE(result.status, AppendStatus::NoSpace);
    QVERIFY(result.preempted.empty());
    QCOMPARE(cache.tokens(a->sequence).size(), std::size_t(4));
    QCOMPARE(cache.stats().referenced_pages, before.referenced_pages);
    QUIRE_VERIFY_INVARIANTS(cache);
  }

  void markComputedRejectsPositionsPastTheTokens() {
    PageCache cache(small_cache(4, ReservationPolicy::ReserveOnAdmission));
    const auto a = cache.admit({run_of(5, 100), 0});
    QVERIFY_THROWS_EXCEPTION(std::out_of_range, cache.mark_computed(a->sequence, 6));
    QVERIFY_THROWS_EXCEPTION(std::out_of_range, cache.release(a->sequence + 1));
  }
};

QUIRE_TEST(PageCacheGrowthTest)
#include "test_page_cache_growth.moc"
