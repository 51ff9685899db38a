// The nearest setting that fits when a plan does not: the same cache in a
// smaller coding first, else the largest whole-page cache.

#include <QTest>

#include "planner_test_helpers.h"
#include "quire/engine/planner/fit_suggestion.h"
#include "test_main.h"

using namespace quire::engine;
using namespace quire::engine::testing;

namespace {

// One device with 1000 MiB free and no reserve; two layers of 100 MiB whose
// FP16 cache takes 8 MiB per page each.
PlacementRequest two_layers(std::int64_t pages) {
  PlacementRequest request;
  request.modules = {layer(0, 100 * MiB, 8 * MiB), layer(1, 100 * MiB, 8 * MiB)};
  request.context_tokens = pages * 256;
  request.page_size = 256;
  request.devices = {device(0, "A", 1000 * MiB)};
  request.policy.default_reserve_bytes = 0;
  return request;
}

// Per page and layer: Q8 4.25 MiB, Q6 3.5 MiB, Q4 2.25 MiB.
std::vector<CacheCoding> codings() {
  return {{"q8", "about 1% less exact", {17 * MiB / 4, 17 * MiB / 4}, {}},
          {"q6", "a little less exact than q8", {7 * MiB / 2, 7 * MiB / 2}, {}},
          {"q4", "less exact", {9 * MiB / 4, 9 * MiB / 4}, {}}};
}

}  // namespace

class FitSuggestionTest : public QObject {
  Q_OBJECT

 private slots:
  void theFirstSmallerCodingThatHoldsTheWholeCache() {
    // 56 pages: FP16 needs 200 + 896 MiB; Q8 200 + 476 MiB.
    const std::optional<FitSuggestion> q8 = suggest_fit(two_layers(56), "fp16", codings());
    QVERIFY(q8);
    QCOMPARE(q8->kind, FitSuggestion::Kind::SmallerCoding);
    QCOMPARE(q8->coding, std::string("q8"));
    QCOMPARE(q8->context_tokens, std::int64_t{56 * 256});
    QCOMPARE(q8->change, std::string("cache stored as q8 instead of fp16 (about 1% less exact)"));
    QCOMPARE(q8->label, std::string("q8 cache"));

    // 100 pages: Q8 needs 200 + 850 MiB, too much; Q6 200 + 700 MiB.
    const std::optional<FitSuggestion> q6 = suggest_fit(two_layers(100), "fp16", codings());
    QVERIFY(q6);
    QCOMPARE(q6->coding, std::string("q6"));
    QCOMPARE(q6->change,
             std::string("cache stored as q6 instead of fp16 (a little less exact than q8)"));
  }

  void elseTheLargestCacheThatFits() {
    // 200 pages: even Q4 needs 200 + 900 MiB. FP16 holds (1000 - 200) / 16 = 50 pages.
    const std::optional<FitSuggestion> smaller = suggest_fit(two_layers(200), "fp16", codings());
    QVERIFY(smaller);
    QCOMPARE(smaller->kind, FitSuggestion::Kind::SmallerCache);
    QCOMPARE(smaller->context_tokens, std::int64_t{50 * 256});
    QCOMPARE(smaller->change, std::string("cache reduced from 51,200 to 12,800 tokens"));
    QCOMPARE(smaller->label, std::string("a 12,800-token cache"));

    // The cache is shared by every conversation: what one of them reads
    // does not bound it.
    PlacementRequest short_model = two_layers(200);
    short_model.model_context_tokens = 1024;
    const std::optional<FitSuggestion> shared = suggest_fit(short_model, "fp16", codings());
    QVERIFY(shared);
    QCOMPARE(shared->context_tokens, std::int64_t{50 * 256});

    // Without smaller codings to try, the cache shrinks at once.
    const std::optional<FitSuggestion> plain = suggest_fit(two_layers(56), "q4", {});
    QVERIFY(plain);
    QCOMPARE(plain->kind, FitSuggestion::Kind::SmallerCache);
    QCOMPARE(plain->context_tokens, std::int64_t{50 * 256});
  }

  void nothingWhenItFitsOrNothingNearDoes() {
    QVERIFY(!suggest_fit(two_layers(10), "fp16", codings()));
    PlacementRequest too_heavy = two_layers(10);
    too_heavy.modules[0].weight_bytes = 2000 * MiB;
    QVERIFY(!suggest_fit(too_heavy, "fp16", codings()));
  }

  void aCodingMustPriceEveryModule() {
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             suggest_fit(two_layers(56), "fp16", {{"q8", "", {MiB}, {}}}));
  }

  void thousandsAreGrouped() {
    QCOMPARE(group_thousands(32768), std::string("32,768"));
    QCOMPARE(group_thousands(999), std::string("999"));
    QCOMPARE(group_thousands(1000000), std::string("1,000,000"));
  }
};

QUIRE_TEST(FitSuggestionTest)
#include "test_fit_suggestion.moc"
