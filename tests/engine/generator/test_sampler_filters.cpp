#include <QTest>
#include <cmath>
#include <vector>

#include "quire/engine/generator/sampler.h"
#include "test_main.h"

using quire::engine::Sampler;
using quire::engine::SamplingSettings;

namespace {

using Floats = std::vector<float>;
using Ids = std::vector<std::int32_t>;

// Logits whose softmax (temperature 1) is exactly these probabilities, up to
// rounding: 0.15, 0.5, 0.1, 0.25 for ids 0 to 3 - deliberately not in order.
Floats known_distribution() {
  return {std::log(0.15f), std::log(0.5f), std::log(0.1f), std::log(0.25f)};
}

SamplingSettings filters_off() {
  SamplingSettings settings;
  settings.temperature = 1;
  settings.top_k = 0;
  settings.top_p = 1;
  settings.min_p = 0;
  settings.typical = 1;
  settings.repetition_penalty = 1;
  settings.seed = 42;
  return settings;
}

Ids survivors(Sampler& sampler, const Floats& logits) {
  const std::int32_t drawn = sampler.sample(logits, {});
  Ids ids;
  double total = 0;
  bool contains_drawn = false;
  for (const auto& candidate : sampler.last_candidates()) {
    ids.push_back(candidate.id);
    total += candidate.probability;
    contains_drawn = contains_drawn || candidate.id == drawn;
  }
  // Whatever survived is a distribution, and the draw came from it.
  if (std::abs(total - 1.0) > 1e-5 || !contains_drawn) return {};
  return ids;
}

}  // namespace

class SamplingFiltersTest : public QObject {
  Q_OBJECT

 private slots:
  void noFilterKeepsEveryTokenInIdOrder() {
    Sampler sampler(filters_off());
    QCOMPARE(survivors(sampler, known_distribution()), (Ids{0, 1, 2, 3}));
    const auto candidates = sampler.last_candidates();
    const float expected[] = {0.15f, 0.5f, 0.1f, 0.25f};
    for (std::size_t i = 0; i < 4; ++i)
      QVERIFY(std::abs(candidates[i].probability - expected[i]) < 1e-6f);
  }

  void topK_data() {
    QTest::addColumn<int>("k");
    QTest::addColumn<Ids>("expected");  // ranked: logit descending, ties by id
    QTest::newRow("k 1") << 1 << Ids{1};
    QTest::newRow("k 3, tie broken by id") << 3 << Ids{1, 3, 5};
    QTest::newRow("k 5") << 5 << Ids{1, 3, 5, 2, 4};
    // Nothing to cut: left unranked, in id order.
    QTest::newRow("k equal to the vocabulary") << 6 << Ids{0, 1, 2, 3, 4, 5};
    QTest::newRow("k larger than the vocabulary") << 10 << Ids{0, 1, 2, 3, 4, 5};
  }

  void topK() {
    QFETCH(int, k);
    QFETCH(Ids, expected);
    SamplingSettings settings = filters_off();
    settings.top_k = k;
    Sampler sampler(settings);
    const Floats logits{1, 5, 3, 5, 2, 4};
    QCOMPARE(survivors(sampler, logits), expected);
    // Renormalized softmax over the survivors.
    double total = 0;
    for (const std::int32_t id : expected)
      total += std::exp(logits[static_cast<std::size_t>(id)] - 5.0);
    for (const auto& candidate : sampler.last_candidates()) {
      const double p = std::exp(logits[static_cast<std::size_t>(candidate.id)] - 5.0) / total;
      QVERIFY(std::abs(candidate.probability - p) < 1e-6);
    }
  }

  void topP_data() {
    QTest::addColumn<float>("p");
    QTest::addColumn<Ids>("expected");
    QTest::newRow("p 0.01: the likeliest only") << 0.01f << Ids{1};
    QTest::newRow("p 0.4") << 0.4f << Ids{1};
    QTest::newRow("p 0.7: 0.5 + 0.25 reaches it") << 0.7f << Ids{1, 3};
    QTest::newRow("p 0.8") << 0.8f << Ids{1, 3, 0};
    QTest::newRow("p 0.95: all") << 0.95f << Ids{1, 3, 0, 2};
  }

  void topP() {
    QFETCH(float, p);
    QFETCH(Ids, expected);
    SamplingSettings settings = filters_off();
    settings.top_p = p;
    Sampler sampler(settings);
    QCOMPARE(survivors(sampler, known_distribution()), expected);
  }

  // Without top-k the ranking grows from a small head; here the head must
  // widen several times.
  void topPOverALargeFlatVocabulary() {
    SamplingSettings settings = filters_off();
    settings.top_p = 0.4995f;
    Sampler sampler(settings);
    const Ids ids = survivors(sampler, Floats(1000, 0.0f));
    QCOMPARE(ids.size(), std::size_t{500});
    for (std::size_t i = 0; i < ids.size(); ++i)
      QCOMPARE(ids[i], static_cast<std::int32_t>(i));
  }

  void minP_data() {
    QTest::addColumn<float>("minP");
    QTest::addColumn<Ids>("expected");  // order kept: ids ascending here
    QTest::newRow("0.25: p >= 0.125") << 0.25f << Ids{0, 1, 3};
    QTest::newRow("0.4: p >= 0.2") << 0.4f << Ids{1, 3};
    QTest::newRow("0.6: p >= 0.3") << 0.6f << Ids{1};
    QTest::newRow("1: only the likeliest") << 1.0f << Ids{1};
  }

  void minP() {
    QFETCH(float, minP);
    QFETCH(Ids, expected);
    SamplingSettings settings = filters_off();
    settings.min_p = minP;
    Sampler sampler(settings);
    QCOMPARE(survivors(sampler, known_distribution()), expected);
  }

  // Entropy of (0.5, 0.25, 0.15, 0.1) is 1.208 nats; the surprisals are
  // 0.693, 1.386, 1.897 and 2.303, so by distance to it the order is
  // 0.25 (id 3), 0.5 (id 1), 0.15 (id 0), 0.1 (id 2).
  void typical_data() {
    QTest::addColumn<float>("mass");
    QTest::addColumn<Ids>("expected");
    QTest::newRow("0.2") << 0.2f << Ids{3};
    QTest::newRow("0.7") << 0.7f << Ids{3, 1};
    QTest::newRow("0.85") << 0.85f << Ids{3, 1, 0};
    QTest::newRow("0.99") << 0.99f << Ids{3, 1, 0, 2};
  }

  void typical() {
    QFETCH(float, mass);
    QFETCH(Ids, expected);
    SamplingSettings settings = filters_off();
    settings.typical = mass;
    Sampler sampler(settings);
    QCOMPARE(survivors(sampler, known_distribution()), expected);
  }

  // Each filter sees the distribution the previous one left, renormalized.
  void filtersChainOnRenormalizedProbabilities() {
    SamplingSettings settings = filters_off();
    const Floats logits{std::log(0.4f), std::log(0.3f), std::log(0.2f), std::log(0.1f)};
    settings.top_k = 2;     // leaves 4/7 and 3/7
    settings.top_p = 0.5f;  // 4/7 reaches it alone; 0.4 of the whole would not
    Sampler sampler(settings);
    QCOMPARE(survivors(sampler, logits), (Ids{0}));

    settings.top_p = 1;
    settings.min_p = 0.8f;  // 3/7 is 0.75 of 4/7
    Sampler min_p(settings);
    QCOMPARE(survivors(min_p, logits), (Ids{0}));
  }

  void temperatureSharpensBeforeTheFilters() {
    SamplingSettings settings = filters_off();
    settings.top_p = 0.7f;
    settings.temperature = 0.25f;  // 0.5^4 : 0.25^4 ... leaves the top one above 0.9
    Sampler sampler(settings);
    QCOMPARE(survivors(sampler, known_distribution()), (Ids{1}));
    settings.temperature = 4.0f;  // flattened: three are needed
    Sampler flat(settings);
    QCOMPARE(survivors(flat, known_distribution()), (Ids{1, 3, 0}));
  }
};

QUIRE_TEST(SamplingFiltersTest)
#include "test_sampler_filters.moc"
