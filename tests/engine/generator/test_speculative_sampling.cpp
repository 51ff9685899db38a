// Speculative sampling's rejection rule (Sampler::verify_draft) on a small
// vocabulary: over many seeds, the tokens it gives follow the target's own
// filtered distribution p by Pearson's chi-square test, whatever was drafted
// (a point mass on a likely token, on an unlikely one, on one the filters
// remove, or a draw from another distribution q), for each sampling filter.
// Rules that are wrong on purpose fail the same test, so it can fail.

#include <QTest>
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "chi_square.h"
#include "quire/engine/generator/random.h"
#include "quire/engine/generator/sampler.h"
#include "test_main.h"

using quire::engine::DraftDistribution;
using quire::engine::DraftVerdict;
using quire::engine::Random;
using quire::engine::Sampler;
using quire::engine::SamplingSettings;

namespace speculative_sampling_test {

using Ids = std::vector<std::int32_t>;

// Twelve tokens, likeliest first, the last ones far in the tail.
const std::vector<float> kRow = {2.0f, 1.6f,  1.3f,  1.1f,  0.7f,  0.4f,
                                 0.2f, -0.1f, -0.5f, -0.9f, -1.4f, -2.0f};
// A draft model's vocabulary may be padded past the model's: q's tokens.
constexpr std::size_t kDraftVocabulary = 14;
constexpr int kDraws = 20000;
constexpr double kSignificance = 0.001;

SamplingSettings unfiltered(float temperature) {
  SamplingSettings settings;
  settings.temperature = temperature;
  settings.top_k = 0;
  settings.top_p = 1;
  settings.repetition_penalty = 1;
  return settings;
}

// One sampling setup: its settings and the context the row is read in.
struct Setup {
  SamplingSettings settings;
  Ids context;
};

Setup setup_named(const QString& name) {
  Setup setup{unfiltered(1.0f), {}};
  if (name == "temperature") {
    setup.settings.temperature = 0.7f;
  } else if (name == "top-k") {
    setup.settings.top_k = 5;
  } else if (name == "top-p") {
    setup.settings.top_p = 0.85f;
  } else if (name == "min-p") {
    setup.settings.min_p = 0.2f;
  } else if (name == "typical") {
    setup.settings.typical = 0.7f;
  } else if (name == "combined") {
    // Every filter at once, on a row that penalties, a bias and a ban change
    // for this context.
    setup.settings.temperature = 0.8f;
    setup.settings.top_k = 9;
    setup.settings.top_p = 0.95f;
    setup.settings.min_p = 0.04f;
    setup.settings.repetition_penalty = 1.4f;
    setup.settings.frequency_penalty = 0.15f;
    setup.settings.presence_penalty = 0.1f;
    setup.settings.token_bias = {{7, 1.2f}};
    setup.settings.banned_tokens = {3};
    setup.context = {0, 0, 1, 5, 5, 5, 9};
  } else {
    throw std::invalid_argument("no setup named " + name.toStdString());
  }
  return setup;
}

// p: what sample() draws from for this row and context, by token id (the
// drafter's ids past the row included, at 0).
std::vector<double> target_of(const Setup& setup) {
  SamplingSettings settings = setup.settings;
  settings.seed = 1;
  Sampler sampler(settings);
  sampler.sample(kRow, setup.context);
  std::vector<double> p(kDraftVocabulary, 0.0);
  for (const auto& candidate : sampler.last_candidates())
    p[static_cast<std::size_t>(candidate.id)] = candidate.probability;
  return p;
}

// A drafter's q unlike p: no mass on the likeliest token, most on the tail,
// some on tokens that filters may remove and on one past the row.
DraftDistribution skewed_draft() {
  DraftDistribution q;
  for (std::int32_t id = 1; id < static_cast<std::int32_t>(kRow.size()); ++id) {
    q.ids.push_back(id);
    q.probabilities.push_back(static_cast<float>(id));  // scaled by the sampler
  }
  q.ids.push_back(static_cast<std::int32_t>(kDraftVocabulary) - 1);
  q.probabilities.push_back(4.0f);
  return q;
}

std::int32_t draw_from(const DraftDistribution& q, Random& random) {
  double total = 0;
  for (const float probability : q.probabilities)
    total += probability;
  const double target = random.uniform() * total;
  double cumulative = 0;
  for (std::size_t i = 0; i < q.ids.size(); ++i) {
    cumulative += q.probabilities[i];
    if (cumulative > target) return q.ids[i];
  }
  return q.ids.back();
}

enum class Rule : std::uint8_t {
  Exact,         // Sampler::verify_draft
  AlwaysAccept,  // wrong: keeps every draft
  RedrawFromP,   // wrong: the right test, but a rejection draws from p itself
};

enum class Draft : std::uint8_t { Likely, Unlikely, Removed, Sampled };

// The histogram of the tokens the rule gives over kDraws seeds.
std::vector<std::int64_t> histogram(const Setup& setup, Draft kind, std::int32_t point, Rule rule) {
  const DraftDistribution q = skewed_draft();
  std::vector<std::int64_t> counts(kDraftVocabulary, 0);
  for (int i = 0; i < kDraws; ++i) {
    SamplingSettings settings = setup.settings;
    settings.seed = 1'000'003ull * static_cast<std::uint64_t>(i) + 17;
    Sampler sampler(settings);
    const bool sampled = kind == Draft::Sampled;
    Random drafter(99'991ull * static_cast<std::uint64_t>(i) + 5);
    const std::int32_t draft = sampled ? draw_from(q, drafter) : point;
    std::int32_t token = draft;
    if (rule != Rule::AlwaysAccept) {
      const DraftVerdict verdict =
          sampler.verify_draft(kRow, setup.context, draft, sampled ? &q : nullptr);
      token = verdict.token;
      if (!verdict.accepted && rule == Rule::RedrawFromP)
        token = sampler.sample(kRow, setup.context);
    }
    ++counts[static_cast<std::size_t>(token)];
  }
  return counts;
}

// The point-mass drafts for p: its likeliest token, its least likely one,
// and a token it gives probability 0 (-1 when it removes none).
std::int32_t point_draft(const std::vector<double>& p, Draft kind) {
  std::int32_t likely = 0, unlikely = 0, removed = -1;
  for (std::size_t i = 0; i < kRow.size(); ++i) {
    const auto id = static_cast<std::int32_t>(i);
    if (p[i] > p[static_cast<std::size_t>(likely)]) likely = id;
    if (p[i] > 0 && (p[static_cast<std::size_t>(unlikely)] == 0 ||
                     p[i] < p[static_cast<std::size_t>(unlikely)])) {
      unlikely = id;
    }
    if (p[i] == 0 && removed < 0) removed = id;
  }
  switch (kind) {
    case Draft::Likely:
      return likely;
    case Draft::Unlikely:
      return unlikely;
    case Draft::Removed:
      return removed;
    case Draft::Sampled:
      return -1;
  }
  return -1;
}

SamplingSettings seeded(SamplingSettings settings, std::uint64_t seed) {
  settings.seed = seed;
  return settings;
}

}  // namespace speculative_sampling_test

Q_DECLARE_METATYPE(speculative_sampling_test::Draft)

class SpeculativeSamplingTest : public QObject {
  Q_OBJECT

 private slots:
  void chiSquareCriticalValuesAreTheTables() {
    using quire::test::chi_square_critical_value;
    // Published quantiles of the chi-square distribution, to their three
    // decimals.
    QVERIFY(std::abs(chi_square_critical_value(1, 0.05) - 3.841) < 5e-4);
    QVERIFY(std::abs(chi_square_critical_value(4, 0.01) - 13.277) < 5e-4);
    QVERIFY(std::abs(chi_square_critical_value(10, 0.001) - 29.588) < 5e-4);
    QVERIFY(std::abs(chi_square_critical_value(11, 0.001) - 31.264) < 5e-4);
    QVERIFY(std::abs(chi_square_critical_value(60, 0.001) - 99.607) < 5e-4);
  }

  void outputFollowsTheTarget_data() {
    using speculative_sampling_test::Draft;
    QTest::addColumn<QString>("setup");
    QTest::addColumn<Draft>("draft");
    for (const char* setup : {"temperature", "top-k", "top-p", "min-p", "typical", "combined"}) {
      QTest::addRow("%s, likely token", setup) << QString(setup) << Draft::Likely;
      QTest::addRow("%s, unlikely token", setup) << QString(setup) << Draft::Unlikely;
      // Temperature alone removes no token.
      if (QString(setup) != "temperature") {
        QTest::addRow("%s, removed token", setup) << QString(setup) << Draft::Removed;
      }
      QTest::addRow("%s, drawn from q", setup) << QString(setup) << Draft::Sampled;
    }
  }

  void outputFollowsTheTarget() {
    namespace t = speculative_sampling_test;
    QFETCH(QString, setup);
    QFETCH(t::Draft, draft);
    const t::Setup chosen = t::setup_named(setup);
    const std::vector<double> p = t::target_of(chosen);
    const std::int32_t point = t::point_draft(p, draft);
    if (draft == t::Draft::Removed) {
      QVERIFY(point >= 0);
      QCOMPARE(p[static_cast<std::size_t>(point)], 0.0);
    }
    if (draft == t::Draft::Unlikely) {
      const std::int32_t likely = t::point_draft(p, t::Draft::Likely);
      QVERIFY(p[static_cast<std::size_t>(point)] * 3 < p[static_cast<std::size_t>(likely)]);
    }

    const std::vector<std::int64_t> exact = t::histogram(chosen, draft, point, t::Rule::Exact);
    const quire::test::ChiSquareFit fit = quire::test::pearson_fit(exact, p, t::kSignificance);
    QVERIFY2(!fit.impossible_outcome, "a token of probability 0 came out");
    QVERIFY2(fit.fits(), qPrintable(QString("chi-square %1 >= %2 (%3 degrees of freedom)")
                                        .arg(fit.statistic)
                                        .arg(fit.critical_value)
                                        .arg(fit.degrees_of_freedom)));
    QVERIFY(fit.degrees_of_freedom >= 1);

    // Rules that are wrong on purpose fail the same test.
    const quire::test::ChiSquareFit always = quire::test::pearson_fit(
        t::histogram(chosen, draft, point, t::Rule::AlwaysAccept), p, t::kSignificance);
    QVERIFY(!always.fits());
    // Drawing from p itself after a rejection is right for a removed token
    // (always turned down) and only slightly off for an unlikely one, too
    // little to show in these draws; where the draft is likely or drawn
    // from q it is far off.
    if (draft == t::Draft::Likely || draft == t::Draft::Sampled) {
      const quire::test::ChiSquareFit redrawn = quire::test::pearson_fit(
          t::histogram(chosen, draft, point, t::Rule::RedrawFromP), p, t::kSignificance);
      QVERIFY(!redrawn.fits());
    }
  }

  // The filters of the combined setup leave tokens with p = 0, which no
  // rule's output may hold, and the target it checks against is what
  // verify_draft itself reports.
  void verifyingLeavesTheTargetInLastCandidates() {
    namespace t = speculative_sampling_test;
    const t::Setup chosen = t::setup_named("combined");
    Sampler sampling(t::seeded(chosen.settings, 5));
    sampling.sample(t::kRow, chosen.context);
    const std::vector<quire::engine::SamplingCandidate> drawn(sampling.last_candidates().begin(),
                                                              sampling.last_candidates().end());
    Sampler verifying(t::seeded(chosen.settings, 5));
    verifying.verify_draft(t::kRow, chosen.context, 4);
    QCOMPARE(verifying.last_candidates().size(), drawn.size());
    for (std::size_t i = 0; i < drawn.size(); ++i) {
      QCOMPARE(verifying.last_candidates()[i].id, drawn[i].id);
      QCOMPARE(verifying.last_candidates()[i].probability, drawn[i].probability);
    }
    // The ban, the penalties and the filters all shaped p.
    const std::vector<double> p = t::target_of(chosen);
    QCOMPARE(p[3], 0.0);
    QVERIFY(p[7] > 0);
    QVERIFY(std::count(p.begin(), p.begin() + std::ptrdiff_t(t::kRow.size()), 0.0) >= 3);
  }

  void greedyAcceptsExactlyTheArgmax() {
    namespace t = speculative_sampling_test;
    Sampler sampler(SamplingSettings::greedy_settings());
    const DraftDistribution q = t::skewed_draft();
    for (std::int32_t draft = 0; draft < 12; ++draft) {
      for (const DraftDistribution* given : {static_cast<const DraftDistribution*>(nullptr), &q}) {
        // The skewed q never drafts token 0.
        if (given && draft == 0) continue;
        const DraftVerdict verdict = sampler.verify_draft(t::kRow, {}, draft, given);
        QCOMPARE(verdict.accepted, draft == 0);
        QCOMPARE(verdict.token, 0);
      }
    }
    // Penalties move the argmax: token 0, said three times, falls below token 1.
    SamplingSettings penalized = SamplingSettings::greedy_settings();
    penalized.repetition_penalty = 2.0f;
    Sampler with_context(penalized);
    const DraftVerdict verdict = with_context.verify_draft(t::kRow, t::Ids{0, 0, 0}, 0);
    QVERIFY(!verdict.accepted);
    QCOMPARE(verdict.token, 1);
  }

  // Top-k of one makes p a point mass: sampled verification then keeps a
  // draft exactly when it is the argmax, as greedy does.
  void aPointMassTargetAcceptsOnlyItsToken() {
    namespace t = speculative_sampling_test;
    SamplingSettings settings = t::unfiltered(0.8f);
    settings.top_k = 1;
    for (std::uint64_t seed = 0; seed < 50; ++seed) {
      Sampler sampler(t::seeded(settings, seed));
      const std::int32_t draft = static_cast<std::int32_t>(seed % 12);
      const DraftVerdict verdict = sampler.verify_draft(t::kRow, {}, draft);
      QCOMPARE(verdict.accepted, draft == 0);
      QCOMPARE(verdict.token, 0);
    }
  }

  void aSeedReproducesTheVerdicts() {
    namespace t = speculative_sampling_test;
    const t::Setup chosen = t::setup_named("top-p");
    const DraftDistribution q = t::skewed_draft();
    Sampler first(t::seeded(chosen.settings, 42));
    Sampler second(t::seeded(chosen.settings, 42));
    std::vector<std::int32_t> tokens;
    int accepted = 0;
    for (int i = 0; i < 200; ++i) {
      const std::int32_t draft = 1 + i % 11;
      const DraftDistribution* given = i % 2 == 0 ? &q : nullptr;
      const DraftVerdict a = first.verify_draft(t::kRow, chosen.context, draft, given);
      const DraftVerdict b = second.verify_draft(t::kRow, chosen.context, draft, given);
      QCOMPARE(a.accepted, b.accepted);
      QCOMPARE(a.token, b.token);
      if (a.accepted) ++accepted;
      tokens.push_back(a.token);
    }
    // Both outcomes happened, and more than one token came out.
    QVERIFY(accepted > 0 && accepted < 200);
    std::sort(tokens.begin(), tokens.end());
    QVERIFY(std::unique(tokens.begin(), tokens.end()) - tokens.begin() > 2);
  }

  // A draft model's vocabulary may be padded past the model's: q may give
  // those ids some mass, and a draft of one is always turned down, the token
  // coming from p.
  void draftsPastTheVocabularyAreTurnedDown() {
    namespace t = speculative_sampling_test;
    const t::Setup chosen = t::setup_named("top-k");
    const std::vector<double> p = t::target_of(chosen);
    const DraftDistribution padded{{0, 1, 14}, {0.25f, 0.25f, 0.5f}};
    int accepted = 0;
    for (std::uint64_t seed = 0; seed < 200; ++seed) {
      Sampler sampler(t::seeded(chosen.settings, seed));
      const DraftVerdict past = sampler.verify_draft(t::kRow, chosen.context, 14, &padded);
      QVERIFY(!past.accepted);
      QVERIFY(past.token >= 0 && past.token < 12);
      QVERIFY(p[static_cast<std::size_t>(past.token)] > 0);
      // Drafts inside the row still stand as often as min(1, p / q) says:
      // token 0 has p(0) > q(0) = 0.25, so it always stands.
      const DraftVerdict inside = sampler.verify_draft(t::kRow, chosen.context, 0, &padded);
      QVERIFY(inside.accepted);
      QCOMPARE(inside.token, 0);
      if (sampler.verify_draft(t::kRow, chosen.context, 1, &padded).accepted) ++accepted;
    }
    // p(1) < q(1) = 0.25: token 1 stands only some of the time.
    QVERIFY(p[1] < 0.25 && p[0] > 0.25);
    QVERIFY(accepted > 0 && accepted < 200);
  }

  void malformedDraftDistributionsAreRefused_data() {
    QTest::addColumn<QVector<int>>("ids");
    QTest::addColumn<QVector<float>>("probabilities");
    QTest::addColumn<int>("draft");
    QTest::addColumn<QString>("message");
    QTest::newRow("lengths differ")
        << QVector<int>{1, 2} << QVector<float>{1.0f} << 1 << "lists 2 tokens but 1 probabilities";
    QTest::newRow("negative id") << QVector<int>{1, -2} << QVector<float>{0.5f, 0.5f} << 1
                                 << "names token -2; token ids are not negative";
    QTest::newRow("negative") << QVector<int>{1, 2} << QVector<float>{1.5f, -0.5f} << 1
                              << "gives token 2 the probability -0.5";
    QTest::newRow("not finite") << QVector<int>{1, 2}
                                << QVector<float>{1.0f, std::numeric_limits<float>::infinity()} << 1
                                << "probabilities must be finite";
    QTest::newRow("listed twice") << QVector<int>{1, 2, 1} << QVector<float>{0.2f, 0.5f, 0.3f} << 1
                                  << "lists token 1 twice";
    QTest::newRow("draft not in q") << QVector<int>{1, 2} << QVector<float>{0.5f, 0.5f} << 3
                                    << "drafted token 3 has no probability";
    QTest::newRow("draft at zero") << QVector<int>{1, 2} << QVector<float>{0.0f, 1.0f} << 1
                                   << "drafted token 1 has no probability";
  }

  void malformedDraftDistributionsAreRefused() {
    namespace t = speculative_sampling_test;
    QFETCH(QVector<int>, ids);
    QFETCH(QVector<float>, probabilities);
    QFETCH(int, draft);
    QFETCH(QString, message);
    const DraftDistribution bad{t::Ids(ids.begin(), ids.end()),
                                std::vector<float>(probabilities.begin(), probabilities.end())};
    const SamplingSettings settings = t::seeded(t::unfiltered(1.0f), 3);
    Sampler sampler(settings);
    try {
      sampler.verify_draft(t::kRow, {}, draft, &bad);
      QFAIL("a malformed draft distribution was accepted");
    } catch (const std::invalid_argument& error) {
      QVERIFY2(QString(error.what()).contains(message), error.what());
    }
    // Nothing of the refused q stays behind: the same sampler then verifies
    // as a fresh one with the same stream does.
    const DraftDistribution q = t::skewed_draft();
    Sampler fresh(settings);
    for (std::int32_t d = 1; d < 12; ++d) {
      const DraftVerdict a = sampler.verify_draft(t::kRow, {}, d, &q);
      const DraftVerdict b = fresh.verify_draft(t::kRow, {}, d, &q);
      QCOMPARE(a.accepted, b.accepted);
      QCOMPARE(a.token, b.token);
    }
  }
};

QUIRE_TEST(SpeculativeSamplingTest)
#include "test_speculative_sampling.moc"
