// Sampler with a token mask: sample() draws exactly what it draws from the
// same row with the masked tokens at -inf, greedy and random, every filter
// alike; the candidate path with the mask draws the same token as sample()
// with it (falling back to the row where it cannot prove the token); a mask
// that allows nothing is an error, never a draw.

#include <QTest>
#include <algorithm>
#include <array>
#include <cstdint>
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
using quire::engine::mask_allows;
using quire::engine::Sampler;
using quire::engine::SamplingSettings;

namespace {

using Floats = std::vector<float>;
using Ids = std::vector<std::int32_t>;
using Mask = std::vector<std::uint32_t>;

constexpr float kInf = std::numeric_limits<float>::infinity();

Floats random_row(std::mt19937& rng, int vocab, float spread) {
  std::normal_distribution<float> logit(0.0f, spread);
  Floats row(static_cast<std::size_t>(vocab));
  for (float& value : row)
    value = logit(rng);
  return row;
}

// Allows each token with probability `density`, and at least one.
Mask random_mask(std::mt19937& rng, int vocab, double density) {
  Mask mask(static_cast<std::size_t>((vocab + 31) / 32), 0u);
  std::bernoulli_distribution allowed(density);
  for (int id = 0; id < vocab; ++id) {
    if (allowed(rng)) mask[std::size_t(id / 32)] |= 1u << (id % 32);
  }
  const int forced = static_cast<int>(rng() % static_cast<unsigned>(vocab));
  mask[std::size_t(forced / 32)] |= 1u << (forced % 32);
  return mask;
}

Floats masked_row(const Floats& row, const Mask& mask) {
  Floats out = row;
  for (std::size_t id = 0; id < out.size(); ++id) {
    if (!mask_allows(mask, static_cast<std::int32_t>(id))) out[id] = -kInf;
  }
  return out;
}

SamplingSettings settings_of(int kind, std::uint64_t seed) {
  SamplingSettings s;
  s.seed = seed;
  switch (kind % 6) {
    case 0:
      s = SamplingSettings::greedy_settings();
      break;
    case 1:  // the defaults: top-k, top-p, repetition penalty
      s.seed = seed;
      break;
    case 2:
      s.top_k = 0;
      s.top_p = 1;
      s.min_p = 0.05f;
      s.temperature = 1.0f;
      break;
    case 3:
      s.top_k = 3;
      s.top_p = 1;
      s.temperature = 0.5f;
      break;
    case 4:
      s.top_k = 0;
      s.top_p = 0.9f;
      s.typical = 0.9f;
      s.token_bias = {{2, 5.0f}};
      s.banned_tokens = {4};
      break;
    default:
      s.top_k = 0;
      s.top_p = 1;
      s.temperature = 2.0f;
      s.presence_penalty = 0.5f;
      break;
  }
  return s;
}

}  // namespace

class MaskedSamplingTest : public QObject {
  Q_OBJECT

 private slots:
  void maskedTokensAreNeverDrawn() {
    std::mt19937 rng(7);
    for (int trial = 0; trial < 600; ++trial) {
      const int vocab = 40 + static_cast<int>(rng() % 300);
      const Floats row = random_row(rng, vocab, trial % 2 ? 1.0f : 4.0f);
      const Mask mask = random_mask(rng, vocab, trial % 3 == 0 ? 0.01 : 0.3);
      const Ids context{1, 2, 3, 5, 8, 13};
      const SamplingSettings settings = settings_of(trial, 1000u + unsigned(trial));
      Sampler with_mask(settings);
      Sampler on_masked_row(settings);
      for (int draw = 0; draw < 3; ++draw) {
        const std::int32_t token = with_mask.sample(row, context, mask);
        QVERIFY2(mask_allows(mask, token), qPrintable(QString("trial %1").arg(trial)));
        // The same as a row whose masked tokens are -inf: the mask comes
        // before every transform, as a ban does.
        QCOMPARE(token, on_masked_row.sample(masked_row(row, mask), context));
      }
    }
  }

  void idsPastTheMaskAreNotAllowed() {
    // A model's padded rows (and any id past the tokenizer's) lie past the
    // grammar's mask: never drawn, however high their logit.
    Floats row(70, 0.0f);
    row[69] = 50.0f;
    const Mask mask{0x0000'0010u};  // token 4 alone, over ids 0..31
    Sampler sampler(SamplingSettings::greedy_settings());
    QCOMPARE(sampler.sample(row, {}, mask), 4);
  }

  void aMaskThatAllowsNothingIsAnError() {
    const Floats row(64, 1.0f);
    const Mask none(2, 0u);
    for (const SamplingSettings& settings :
         {SamplingSettings::greedy_settings(), settings_of(1, 3)}) {
      Sampler sampler(settings);
      QVERIFY_THROWS_EXCEPTION(std::invalid_argument, sampler.sample(row, {}, none));
    }
    // Allowed tokens whose logits are all -inf leave nothing either.
    Floats dead(64, 1.0f);
    dead[9] = -kInf;
    const Mask only_nine{1u << 9, 0u};
    Sampler sampler(SamplingSettings::greedy_settings());
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, sampler.sample(dead, {}, only_nine));
  }

  void candidatesAgreeWithTheRowUnderAMask() {
    std::mt19937 rng(11);
    std::int64_t decided = 0;
    for (int trial = 0; trial < 1500; ++trial) {
      const int vocab = 64 + static_cast<int>(rng() % 600);
      const Floats row = random_row(rng, vocab, trial % 2 ? 1.0f : 6.0f);
      // Dense masks let the candidates decide; sparse ones mostly fall back.
      const double density = std::array{0.95, 0.5, 0.05}[std::size_t(trial % 3)];
      const Mask mask = random_mask(rng, vocab, density);
      const Ids context{3, 4, 4, 9};
      const SamplingSettings settings = settings_of(trial, 77u + unsigned(trial));
      Sampler candidate_path(settings);
      Sampler whole_row(settings);
      const int k = std::min(vocab, candidate_path.candidates_wanted(vocab) / (trial % 4 + 1));
      for (int draw = 0; draw < 2; ++draw) {
        quire::test::RowCandidates candidates;
        quire::test::make_row_candidates(row, k, candidate_path, context, candidates);
        std::optional<std::int32_t> token =
            candidate_path.sample_from_candidates(candidates.view, context, mask);
        if (token) {
          ++decided;
        } else {
          token = candidate_path.sample(row, context, mask);
        }
        const std::int32_t expected = whole_row.sample(row, context, mask);
        QVERIFY2(*token == expected,
                 qPrintable(QString("trial %1 draw %2: %3 from candidates, %4 from the row")
                                .arg(trial)
                                .arg(draw)
                                .arg(*token)
                                .arg(expected)));
        QVERIFY(mask_allows(mask, *token));
      }
    }
    // Not a vacuous comparison: the candidates decided a good share.
    QVERIFY2(decided > 300, qPrintable(QString::number(decided)));
  }
};

QUIRE_TEST(MaskedSamplingTest)
#include "test_masked_sampling.moc"
