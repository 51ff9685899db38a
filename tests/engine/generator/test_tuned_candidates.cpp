#include <QTest>
#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "quire/engine/generator/random.h"
#include "quire/engine/generator/sampler.h"
#include "row_candidates.h"
#include "test_main.h"
#include "tuned_sampler_support.h"

using quire::engine::Random;
using quire::engine::Sampler;
using quire::engine::SamplingSettings;
using quire::test::last_distribution;
using quire::test::plain_sampling;
using quire::test::same_distribution;

namespace {

constexpr std::size_t kTunedVocab = 600;

// A row of logits spread over [0, 10), and a context that repeats a
// sequence followed by the row's best token, so that DRY pushes it down.
struct TunedRow {
  std::vector<float> logits;
  std::vector<std::int32_t> context;
};

TunedRow tuned_row(std::uint64_t seed) {
  Random random(seed);
  TunedRow row;
  row.logits.resize(kTunedVocab);
  for (float& logit : row.logits)
    logit = static_cast<float>(10 * random.uniform());
  const auto best = static_cast<std::int32_t>(
      std::max_element(row.logits.begin(), row.logits.end()) - row.logits.begin());
  const auto a = static_cast<std::int32_t>(random.next() % kTunedVocab);
  const auto b = static_cast<std::int32_t>(random.next() % kTunedVocab);
  row.context = {a, b, best, 5, a, b};
  return row;
}

// Draws with the candidate path on one sampler and with sample() on its
// twin, row after row; both must give the same tokens. Returns how many rows
// the candidates decided.
int compare_paths(const SamplingSettings& settings, int k, int rows) {
  Sampler by_candidates(settings);
  Sampler by_rows(settings);
  int decided = 0;
  for (int i = 0; i < rows; ++i) {
    const TunedRow row = tuned_row(static_cast<std::uint64_t>(i) + 100);
    quire::test::RowCandidates candidates;
    quire::test::make_row_candidates(row.logits, k, by_candidates, row.context, candidates);
    std::optional<std::int32_t> token =
        by_candidates.sample_from_candidates(candidates.view, row.context);
    if (token) {
      ++decided;
    } else {
      token = by_candidates.sample(row.logits, row.context);
    }
    const std::int32_t expected = by_rows.sample(row.logits, row.context);
    if (*token != expected) return -1;
    if (!same_distribution(last_distribution(by_candidates), last_distribution(by_rows), 1e-5))
      return -2;
  }
  return decided;
}

}  // namespace

class TunedCandidatesTest : public QObject {
  Q_OBJECT

 private slots:
  void dryPenalizedTokensAreAdjustedTokens() {
    SamplingSettings settings = plain_sampling();
    settings.dry_multiplier = 1;
    Sampler sampler(settings);
    std::vector<std::int32_t> adjusted;
    sampler.adjusted_tokens(std::vector<std::int32_t>{1, 2, 3, 1, 2}, 8, adjusted);
    QCOMPARE(adjusted, (std::vector<std::int32_t>{3}));
  }

  void dryCandidatesAgreeWithTheRow() {
    SamplingSettings settings = plain_sampling();
    settings.dry_multiplier = 2;
    settings.top_k = 40;
    QCOMPARE(compare_paths(settings, 104, 60), 60);  // top-k cuts inside: all decided
    settings.top_k = 0;
    settings.top_p = 0.9f;
    settings.temperature = 0.05f;  // the tail's weight underflows: decided too
    QCOMPARE(compare_paths(settings, 256, 60), 60);
  }

  void xtcCandidatesAgreeWithTheRow() {
    SamplingSettings settings = plain_sampling();
    settings.xtc_probability = 0.5f;
    settings.xtc_threshold = 0.05f;
    settings.top_k = 20;
    settings.temperature = 0.7f;
    QCOMPARE(compare_paths(settings, 84, 60), 60);
    // Without a top-k cut the bounded case falls back while XTC is on.
    settings.top_k = 0;
    settings.top_p = 0.5f;
    settings.temperature = 1;
    QCOMPARE(compare_paths(settings, 256, 30), 0);
  }

  void topNSigmaAndMirostatAlwaysFetchTheRow() {
    for (const bool mirostat : {false, true}) {
      SamplingSettings settings = plain_sampling();
      settings.top_k = 20;
      if (mirostat) {
        settings.mirostat = 2;
      } else {
        settings.top_n_sigma = 1;
      }
      QCOMPARE(compare_paths(settings, 84, 30), 0);
    }
  }

  void verificationUsesTheSameXtcDistribution() {
    // Both consume XTC's number first, so the p a draft is judged by is the
    // distribution sample() draws from with the same seed.
    for (std::uint64_t seed = 1; seed <= 12; ++seed) {
      SamplingSettings settings = plain_sampling();
      settings.xtc_probability = 0.5f;
      settings.xtc_threshold = 0.02f;
      settings.seed = seed;
      const TunedRow row = tuned_row(seed);
      Sampler drawing(settings);
      drawing.sample(row.logits, row.context);
      Sampler verifying(settings);
      verifying.verify_draft(row.logits, row.context, 0);
      QVERIFY(same_distribution(last_distribution(verifying), last_distribution(drawing)));
    }
  }

  void verificationStepsMirostat() {
    SamplingSettings settings = plain_sampling();
    settings.mirostat = 2;
    settings.mirostat_tau = 3;
    const TunedRow row = tuned_row(3);
    Sampler drawing(settings);
    drawing.sample(row.logits, row.context);
    Sampler verifying(settings);
    const auto verdict = verifying.verify_draft(row.logits, row.context, 0);
    QVERIFY(same_distribution(last_distribution(verifying), last_distribution(drawing)));
    const double p = last_distribution(verifying).at(verdict.token);
    QVERIFY(std::abs(verifying.mirostat_mu() - (6 - 0.1 * (-std::log2(p) - 3))) < 1e-5);
  }
};

QUIRE_TEST(TunedCandidatesTest)
#include "test_tuned_candidates.moc"
