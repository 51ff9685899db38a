// Sampler's candidate path against sample() on the whole row: over thousands
// of random rows and settings the two draw the same token from the same seed
// (the candidate path falling back to the row where it cannot prove the
// token), rows that the path can decide exactly never fall back, and rows
// that it cannot decide always do. The candidates come from kernels'
// top_logits_host and gather_logits_host, the CPU backend's op.

#include <QTest>
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <random>
#include <stdexcept>
#include <vector>

#include "quire/engine/generator/sampler.h"
#include "quire/kernels/top_logits.h"
#include "row_candidates.h"
#include "test_main.h"

using quire::engine::LogitCandidates;
using quire::engine::Sampler;
using quire::engine::SamplingSettings;

Q_DECLARE_METATYPE(SamplingSettings)

namespace {

using Floats = std::vector<float>;
using Ids = std::vector<std::int32_t>;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// The token from candidates, or from the row when they do not decide; empty
// when sampling throws (as sample() does for a broken row).
std::optional<std::int32_t> via_candidates(Sampler& sampler, const Floats& row, const Ids& context,
                                           int k, bool& fell_back, double tail_error = 0) {
  quire::test::RowCandidates candidates;
  quire::test::make_row_candidates(row, k, sampler, context, candidates, tail_error);
  const std::int64_t before = sampler.candidate_fallbacks();
  if (const std::optional<std::int32_t> token =
          sampler.sample_from_candidates(candidates.view, context)) {
    fell_back = false;
    return token;
  }
  fell_back = sampler.candidate_fallbacks() == before + 1;
  try {
    return sampler.sample(row, context);
  } catch (const std::invalid_argument&) {
    return std::nullopt;
  }
}

std::optional<std::int32_t> via_row(Sampler& sampler, const Floats& row, const Ids& context) {
  try {
    return sampler.sample(row, context);
  } catch (const std::invalid_argument&) {
    return std::nullopt;
  }
}

template <typename T>
T pick(std::mt19937& rng, std::initializer_list<T> choices) {
  return *(choices.begin() + rng() % choices.size());
}

Floats random_row(std::mt19937& rng, std::size_t vocab) {
  Floats row(vocab);
  const float spread = pick(rng, {0.5f, 2.0f, 4.0f, 12.0f});
  std::normal_distribution<float> normal(0.0f, spread);
  const int shape = int(rng() % 6);
  for (float& logit : row) {
    logit = normal(rng);
    if (shape == 1) logit = std::round(logit);  // many ties
    if (shape == 2 && rng() % 4 == 0) logit = -kInf;
  }
  if (shape == 3) {
    // Nearly everything -inf.
    for (float& logit : row)
      if (rng() % 16 != 0) logit = -kInf;
  }
  if (shape == 4) {
    // One token far ahead of a flat field.
    std::fill(row.begin(), row.end(), 0.0f);
    row[rng() % vocab] = 30.0f;
  }
  if (rng() % 200 == 0) row[rng() % vocab] = kInf;
  if (rng() % 200 == 0) row[rng() % vocab] = kNaN;
  if (rng() % 100 == 0) row[rng() % vocab] = -0.0f;
  return row;
}

SamplingSettings random_settings(std::mt19937& rng, std::size_t vocab) {
  SamplingSettings s;
  s.temperature = pick(rng, {0.0f, 0.005f, 0.011f, 0.05f, 0.3f, 0.8f, 1.0f, 1.7f});
  s.top_k = pick(rng, {0, 0, 1, 5, 50, 200, 2000});
  s.top_p = pick(rng, {1.0f, 1.0f, 0.5f, 0.8f, 0.95f, 0.999f});
  s.min_p = pick(rng, {0.0f, 0.0f, 0.02f, 0.1f, 0.5f});
  s.typical = pick(rng, {1.0f, 1.0f, 1.0f, 0.9f});
  s.repetition_penalty = pick(rng, {1.0f, 1.0f, 1.025f, 1.3f, 0.8f, 3.0f});
  s.penalty_range = pick(rng, {0, 8, 64, 1024});
  s.frequency_penalty = pick(rng, {0.0f, 0.0f, 0.4f, -0.2f});
  s.presence_penalty = pick(rng, {0.0f, 0.0f, 0.3f});
  const auto token = [&] { return static_cast<std::int32_t>(rng() % (vocab + 4)) - 2; };
  for (int b = int(rng() % 4); b > 0; --b) {
    // Large positive biases on low tokens lift them over every candidate.
    s.token_bias[token()] = pick(rng, {60.0f, 8.0f, 0.5f, -3.0f, -kInf});
  }
  for (int b = int(rng() % 3); b > 0; --b)
    s.banned_tokens.push_back(token());
  s.seed = rng();
  return s;
}

Ids random_context(std::mt19937& rng, std::size_t vocab) {
  Ids context(rng() % 200);
  for (std::int32_t& token : context)
    token = static_cast<std::int32_t>(rng() % (vocab + 3)) - 1;
  return context;
}

// Settings with penalties, bias and bans off.
SamplingSettings plain(float temperature, int top_k, float top_p, float min_p) {
  SamplingSettings s;
  s.temperature = temperature;
  s.top_k = top_k;
  s.top_p = top_p;
  s.min_p = min_p;
  s.repetition_penalty = 1;
  s.seed = 1234;
  return s;
}

}  // namespace

class CandidateSamplingTest : public QObject {
  Q_OBJECT

  // Runs `rows` draws from one seed through both paths; returns the fallbacks.
  static int compare_streams(const SamplingSettings& settings, const std::vector<Floats>& rows,
                             const Ids& context, int k) {
    Sampler full(settings), candidate(settings);
    int fallbacks = 0;
    for (const Floats& row : rows) {
      bool fell_back = false;
      const std::optional<std::int32_t> expected = via_row(full, row, context);
      const std::optional<std::int32_t> actual =
          via_candidates(candidate, row, context, k, fell_back);
      if (expected != actual) {
        QTest::qFail(qPrintable(QStringLiteral("token %1 from candidates, %2 from the row")
                                    .arg(actual ? *actual : -1)
                                    .arg(expected ? *expected : -1)),
                     __FILE__, __LINE__);
        return -1;
      }
      fallbacks += fell_back ? 1 : 0;
    }
    return fallbacks;
  }

 private slots:
  void randomRowsAndSettingsDrawTheSameTokens() {
    std::mt19937 rng(20261124);
    int decided = 0, fallbacks = 0;
    for (int trial = 0; trial < 3000; ++trial) {
      const std::size_t vocab = pick<std::size_t>(rng, {1, 2, 7, 64, 300, 1000, 4099});
      const SamplingSettings settings = random_settings(rng, vocab);
      const Ids context = random_context(rng, vocab);
      Sampler full(settings), candidate(settings);
      const int k = rng() % 3 == 0 ? int(1 + rng() % 300) : candidate.candidates_wanted(vocab);
      // Several rows per seed: a draw that consumed the wrong number of
      // random numbers would shift every later one.
      for (int step = 0; step < 4; ++step) {
        const Floats row = random_row(rng, vocab);
        const double tolerance = quire::kernels::kTopLogitsTailSumTolerance * 0.999;
        const double tail_error = pick(rng, {0.0, tolerance, -tolerance});
        bool fell_back = false;
        const std::optional<std::int32_t> expected = via_row(full, row, context);
        const std::optional<std::int32_t> actual =
            via_candidates(candidate, row, context, k, fell_back, tail_error);
        if (expected != actual) {
          QFAIL(qPrintable(QStringLiteral("trial %1 step %2: token %3 from candidates, %4 from "
                                          "the row (vocab %5, k %6, temperature %7, top_k %8, "
                                          "top_p %9, min_p %10)")
                               .arg(trial)
                               .arg(step)
                               .arg(actual ? *actual : -1)
                               .arg(expected ? *expected : -1)
                               .arg(vocab)
                               .arg(k)
                               .arg(double(settings.temperature))
                               .arg(settings.top_k)
                               .arg(double(settings.top_p))
                               .arg(double(settings.min_p))));
        }
        (fell_back ? fallbacks : decided) += 1;
      }
    }
    qInfo("%d rows decided from candidates, %d fell back to the row", decided, fallbacks);
    // Most random settings are decidable; a path that always fell back would
    // pass the comparison above and be useless.
    QVERIFY(decided > 4 * fallbacks);
  }

  void exactCasesNeverFallBack_data() {
    QTest::addColumn<SamplingSettings>("settings");
    QTest::addColumn<int>("k");
    QTest::newRow("greedy") << SamplingSettings::greedy_settings() << 8;
    QTest::newRow("greedy, k 1") << SamplingSettings::greedy_settings() << 1;
    QTest::newRow("top-k 50") << plain(0.8f, 50, 0.8f, 0.0f) << 114;
    QTest::newRow("top-k 50, typical") << [] {
      SamplingSettings s = plain(1.0f, 50, 1.0f, 0.05f);
      s.typical = 0.7f;
      return s;
    }() << 50;
    QTest::newRow("top-k equal to k") << plain(1.2f, 256, 0.9f, 0.0f) << 256;
    // Temperature 0.01 over logits a few units apart: every token outside
    // the candidates weighs exactly 0.
    QTest::newRow("cold, no filter") << plain(0.01f, 0, 1.0f, 0.0f) << 64;
    // A bias beyond every logit: the biased token alone carries weight.
    QTest::newRow("huge bias") << [] {
      SamplingSettings s = plain(1.0f, 0, 1.0f, 0.0f);
      s.token_bias[3] = 500.0f;
      return s;
    }() << 16;
  }

  void exactCasesNeverFallBack() {
    QFETCH(SamplingSettings, settings);
    QFETCH(int, k);
    std::mt19937 rng(99);
    std::normal_distribution<float> normal(0.0f, 3.0f);
    std::vector<Floats> rows(300, Floats(5000));
    for (Floats& row : rows)
      for (float& logit : row)
        logit = normal(rng);
    QCOMPARE(compare_streams(settings, rows, {}, k), 0);
  }

  void boundedCasesRarelyFallBack_data() {
    QTest::addColumn<SamplingSettings>("settings");
    QTest::newRow("top-p 0.9") << plain(1.0f, 0, 0.9f, 0.0f);
    QTest::newRow("top-p 0.5, hot") << plain(1.5f, 0, 0.5f, 0.0f);
    QTest::newRow("min-p 0.1") << plain(1.0f, 0, 1.0f, 0.1f);
    QTest::newRow("top-p and min-p") << plain(0.7f, 0, 0.95f, 0.05f);
  }

  // Top-p and min-p without top-k: the cut and the draw are decided with
  // margins, so a few rows may fall back, never a wrong token.
  void boundedCasesRarelyFallBack() {
    QFETCH(SamplingSettings, settings);
    std::mt19937 rng(7);
    std::vector<Floats> rows(400, Floats(32000));
    for (Floats& row : rows) {
      // Peaked rows, as a language model's are: a few likely tokens, a long tail.
      std::normal_distribution<float> normal(0.0f, 2.0f);
      for (float& logit : row)
        logit = normal(rng);
      for (int hot = 0; hot < 20; ++hot)
        row[rng() % row.size()] += 14.0f + float(hot % 5);
    }
    const int fallbacks = compare_streams(settings, rows, {}, 256);
    qInfo("%d of %zu rows fell back", fallbacks, rows.size());
    QVERIFY2(fallbacks >= 0 && fallbacks <= 8, qPrintable(QString::number(fallbacks)));
  }

  void penaltiesAndBiasesStayExact() {
    // Penalties on tokens of the context, inside and outside the candidates,
    // and a large bias on a low token: top-k 40 still cuts inside.
    SamplingSettings s = plain(0.9f, 40, 0.9f, 0.0f);
    s.repetition_penalty = 1.2f;
    s.frequency_penalty = 0.1f;
    s.presence_penalty = 0.2f;
    s.penalty_range = 32;
    s.token_bias[4999] = 40.0f;
    s.banned_tokens = {0, 17};
    std::mt19937 rng(5);
    std::normal_distribution<float> normal(0.0f, 3.0f);
    std::vector<Floats> rows(200, Floats(5000));
    for (Floats& row : rows)
      for (float& logit : row)
        logit = normal(rng);
    Ids context(100);
    for (std::int32_t& token : context)
      token = std::int32_t(rng() % 5000);
    QCOMPARE(compare_streams(s, rows, context, 104), 0);
  }

  void undecidableRowsFallBack() {
    // No filter at a temperature where the tail carries weight: the draw
    // walks every token in id order, which k candidates cannot reproduce.
    std::mt19937 rng(3);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<Floats> rows(50, Floats(3000));
    for (Floats& row : rows)
      for (float& logit : row)
        logit = normal(rng);
    QCOMPARE(compare_streams(plain(1.0f, 0, 1.0f, 0.0f), rows, {}, 256), 50);
    // Top-k beyond the candidates.
    QCOMPARE(compare_streams(plain(1.0f, 500, 1.0f, 0.0f), rows, {}, 256), 50);

    // Greedy, where a heavy repetition penalty pushes every returned token
    // below the others: the best token is outside the candidates.
    Floats row(1000, 1.0f);
    Ids context;
    for (int i = 0; i < 8; ++i) {
      row[std::size_t(i * 100)] = 10.0f;
      context.push_back(i * 100);
    }
    SamplingSettings greedy = SamplingSettings::greedy_settings();
    greedy.repetition_penalty = 20.0f;
    Sampler full(greedy), candidate(greedy);
    bool fell_back = false;
    QCOMPARE(via_candidates(candidate, row, context, 8, fell_back), via_row(full, row, context));
    QVERIFY(fell_back);
    QCOMPARE(*via_row(full, row, context), 1);  // the first unpenalized token

    // A NaN: sample() decides whether it throws (a banned NaN does not).
    Floats broken(100, 0.5f);
    broken[50] = kNaN;
    SamplingSettings banned = plain(1.0f, 10, 1.0f, 0.0f);
    Sampler full_nan(banned), candidate_nan(banned);
    QCOMPARE(via_candidates(candidate_nan, broken, {}, 10, fell_back), std::nullopt);
    QVERIFY(fell_back);
    QCOMPARE(via_row(full_nan, broken, {}), std::nullopt);
    banned.banned_tokens = {50};
    Sampler full_banned(banned), candidate_banned(banned);
    QCOMPARE(via_candidates(candidate_banned, broken, {}, 10, fell_back),
             via_row(full_banned, broken, {}));
  }

  void tiesAtTheBoundFollowTheLowerId() {
    // Every logit equal: the candidates are the lowest ids, and greedy and
    // top-k pick among them exactly as the row does.
    const Floats row(500, 2.0f);
    QCOMPARE(compare_streams(SamplingSettings::greedy_settings(), {row, row}, {}, 4), 0);
    QCOMPARE(compare_streams(plain(1.0f, 3, 1.0f, 0.0f), {row, row, row}, {}, 4), 0);
    // A bias that lifts a high id to exactly the shared value ranks it after
    // the lower ids; one that lifts it above wins.
    Floats low = row;
    low[400] = 1.0f;
    SamplingSettings lifted = SamplingSettings::greedy_settings();
    lifted.token_bias[400] = 1.0f;
    QCOMPARE(compare_streams(lifted, {low}, {}, 4), 0);
    lifted.token_bias[400] = 1.5f;
    QCOMPARE(compare_streams(lifted, {low}, {}, 4), 0);
  }
};

QUIRE_TEST(CandidateSamplingTest)
#include "test_candidate_sampling.moc"
