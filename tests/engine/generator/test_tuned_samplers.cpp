#include <QTest>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "quire/engine/generator/random.h"
#include "quire/engine/generator/sampler.h"
#include "test_main.h"
#include "tuned_sampler_support.h"

using quire::engine::Random;
using quire::engine::Sampler;
using quire::engine::SamplingSettings;
using quire::test::last_distribution;
using quire::test::plain_sampling;
using quire::test::same_distribution;
using quire::test::softmax_over;

namespace {

using Distribution = std::map<std::int32_t, double>;

// Logits whose softmax is 0.1, 0.4, 0.2, 0.3 for ids 0 to 3.
std::vector<float> four_tokens() {
  return {std::log(0.1f), std::log(0.4f), std::log(0.2f), std::log(0.3f)};
}

// The token a draw picks from `distribution` (walked in id order, as the
// sampler walks an unranked list) with the uniform number u.
std::int32_t drawn_by(const Distribution& distribution, double u) {
  double cumulative = 0;
  std::int32_t last = -1;
  for (const auto& [id, p] : distribution) {
    cumulative += p;
    last = id;
    if (cumulative > u) return id;
  }
  return last;
}

// Probabilities 1/2, 1/4, 1/8, 1/16, 1/16: surprises of 1, 2, 3, 4 and 4 bits.
std::vector<float> halving_tokens() {
  return {std::log(0.5f), std::log(0.25f), std::log(0.125f), std::log(0.0625f), std::log(0.0625f)};
}

}  // namespace

class TunedSamplersTest : public QObject {
  Q_OBJECT

 private slots:
  // XTC

  void xtcRemovesAllButTheLeastLikelyAboveTheThreshold() {
    SamplingSettings settings = plain_sampling();
    settings.xtc_probability = 1;
    settings.xtc_threshold = 0.15f;  // 0.4, 0.3 and 0.2 pass; 0.2 stays
    Sampler sampler(settings);
    sampler.sample(four_tokens(), {});
    QVERIFY(same_distribution(last_distribution(sampler), {{0, 1.0 / 3}, {2, 2.0 / 3}}));
  }

  void xtcLeavesASingleTokenAboveTheThresholdAlone() {
    SamplingSettings settings = plain_sampling();
    settings.xtc_probability = 1;
    settings.xtc_threshold = 0.35f;  // only 0.4 passes
    Sampler sampler(settings);
    sampler.sample(four_tokens(), {});
    QVERIFY(
        same_distribution(last_distribution(sampler), {{0, 0.1}, {1, 0.4}, {2, 0.2}, {3, 0.3}}));
  }

  void xtcActsWhenItsNumberFallsBelowTheProbability() {
    // Each draw takes XTC's number first, then the draw's; the test replays
    // both from the seed and finds seeds where XTC acts and where it does not.
    bool acted = false, skipped = false;
    for (std::uint64_t seed = 1; seed <= 20; ++seed) {
      SamplingSettings settings = plain_sampling();
      settings.xtc_probability = 0.5f;
      settings.xtc_threshold = 0.15f;
      settings.seed = seed;
      Sampler sampler(settings);
      const std::int32_t token = sampler.sample(four_tokens(), {});
      Random replay(seed);
      const bool acts = replay.uniform() < 0.5;
      const Distribution expected = acts ? Distribution{{0, 1.0 / 3}, {2, 2.0 / 3}}
                                         : Distribution{{0, 0.1}, {1, 0.4}, {2, 0.2}, {3, 0.3}};
      QVERIFY(same_distribution(last_distribution(sampler), expected));
      QCOMPARE(token, drawn_by(expected, replay.uniform()));
      (acts ? acted : skipped) = true;
    }
    QVERIFY(acted && skipped);
  }

  void xtcOffConsumesNoNumber() {
    // A threshold above 0.5 turns XTC off: the draws are those without it.
    for (const float threshold : {0.6f, 0.1f}) {
      SamplingSettings settings = plain_sampling();
      settings.xtc_threshold = threshold;
      settings.xtc_probability = threshold > 0.5f ? 1.0f : 0.0f;
      Sampler off(settings);
      Sampler plain(plain_sampling());
      for (int i = 0; i < 20; ++i)
        QCOMPARE(off.sample(four_tokens(), {}), plain.sample(four_tokens(), {}));
    }
  }

  // Top-nσ

  void topNSigmaKeepsTheLogitsWithinNDeviationsOfTheHighest_data() {
    QTest::addColumn<float>("n");
    QTest::addColumn<float>("temperature");
    QTest::newRow("n 1") << 1.0f << 1.0f;
    QTest::newRow("n 2") << 2.0f << 1.0f;
    QTest::newRow("n 0.5") << 0.5f << 1.0f;
    // Scaling by the temperature scales the deviation too: the same tokens.
    QTest::newRow("n 1, temperature 0.5") << 1.0f << 0.5f;
    QTest::newRow("n 2, temperature 3") << 2.0f << 3.0f;
  }

  void topNSigmaKeepsTheLogitsWithinNDeviationsOfTheHighest() {
    QFETCH(float, n);
    QFETCH(float, temperature);
    const std::vector<float> logits{3, 7, 0, 5, 1, 6, 2, 4, -1.5f, 6.5f};
    double mean = 0;
    for (const float logit : logits)
      mean += logit;
    mean /= static_cast<double>(logits.size());
    double variance = 0;
    for (const float logit : logits)
      variance += (logit - mean) * (logit - mean);
    const double sigma = std::sqrt(variance / static_cast<double>(logits.size()));
    std::vector<std::int32_t> kept;
    for (std::size_t i = 0; i < logits.size(); ++i) {
      if (logits[i] / temperature >= 7 / temperature - n * sigma / temperature)
        kept.push_back(static_cast<std::int32_t>(i));
    }
    QVERIFY(kept.size() > 1 && kept.size() < logits.size());
    SamplingSettings settings = plain_sampling();
    settings.top_n_sigma = n;
    settings.temperature = temperature;
    Sampler sampler(settings);
    sampler.sample(logits, {});
    QVERIFY(same_distribution(last_distribution(sampler), softmax_over(logits, kept, temperature)));
  }

  void topNSigmaLeavesBannedTokensOutOfItsStatistics() {
    // Banned, token 4's -inf is not a logit: the deviation of 0, 1, 2, 3 is
    // sqrt(1.25), so n = 1 keeps 3 and 2 (2 >= 3 - 1.118).
    SamplingSettings settings = plain_sampling();
    settings.top_n_sigma = 1;
    settings.banned_tokens = {4};
    Sampler sampler(settings);
    const std::vector<float> logits{0, 1, 2, 3, 100};
    sampler.sample(logits, {});
    QVERIFY(same_distribution(last_distribution(sampler), softmax_over(logits, {2, 3})));
  }

  void topNSigmaOffAtZeroOrBelow() {
    for (const float n : {0.0f, -1.0f}) {
      SamplingSettings settings = plain_sampling();
      settings.top_n_sigma = n;
      Sampler sampler(settings);
      sampler.sample(four_tokens(), {});
      QCOMPARE(sampler.last_candidates().size(), std::size_t{4});
    }
  }

  // Mirostat v2

  void mirostatStartsAtTwiceTau() {
    SamplingSettings settings = plain_sampling();
    settings.mirostat = 2;
    settings.mirostat_tau = 1.5f;
    QCOMPARE(Sampler(settings).mirostat_mu(), 3.0);
  }

  void mirostatKeepsTheTokensWithinMuAndSteersMu() {
    // The definition replayed: keep the tokens whose surprise is at most mu
    // (the likeliest when none), renormalize, draw with the seed's next
    // number, then mu -= eta * (surprise of the drawn token - tau).
    SamplingSettings settings = plain_sampling();
    settings.mirostat = 2;
    settings.mirostat_tau = 1.6f;  // mu starts at 3.2, clear of every surprise
    settings.mirostat_eta = 0.25f;
    settings.top_k = 1;  // replaced by mirostat
    settings.min_p = 0.9f;
    settings.seed = 7;
    Sampler sampler(settings);
    const std::vector<double> p{0.5, 0.25, 0.125, 0.0625, 0.0625};
    Random replay(7);
    double mu = 2.0 * static_cast<double>(1.6f);
    std::vector<std::size_t> kept_sizes;
    for (int step = 0; step < 12; ++step) {
      Distribution kept;
      for (std::size_t i = 0; i < p.size(); ++i) {
        if (-std::log2(p[i]) <= mu) kept[static_cast<std::int32_t>(i)] = p[i];
      }
      if (kept.empty()) kept[0] = 1;
      double total = 0;
      for (const auto& [id, q] : kept)
        total += q;
      for (auto& [id, q] : kept)
        q /= total;
      const std::int32_t expected = drawn_by(kept, replay.uniform());
      const std::int32_t token = sampler.sample(halving_tokens(), {});
      QCOMPARE(token, expected);
      QVERIFY(same_distribution(last_distribution(sampler), kept, 1e-6));
      mu -= 0.25 * (-std::log2(kept[token]) - static_cast<double>(1.6f));
      QVERIFY(std::abs(sampler.mirostat_mu() - mu) < 1e-5);
      kept_sizes.push_back(kept.size());
    }
    // mu moved enough to change the cut at least once.
    QVERIFY(*std::min_element(kept_sizes.begin(), kept_sizes.end()) <
            *std::max_element(kept_sizes.begin(), kept_sizes.end()));
  }

  void mirostatKeepsTheLikeliestWhenMuIsBelowEverySurprise() {
    SamplingSettings settings = plain_sampling();
    settings.mirostat = 2;
    settings.mirostat_tau = 0.25f;  // mu 0.5: every surprise is 1 bit or more
    Sampler sampler(settings);
    QCOMPARE(sampler.sample(halving_tokens(), {}), 0);
    QVERIFY(same_distribution(last_distribution(sampler), {{0, 1.0}}));
    // Surprise 0, so mu grows by eta * tau.
    QVERIFY(std::abs(sampler.mirostat_mu() - (0.5 + 0.1 * 0.25)) < 1e-6);
  }

  // Ranges

  void rangesAreRefusedByName_data() {
    QTest::addColumn<QString>("setting");
    QTest::addColumn<int>("which");
    QTest::newRow("dry_multiplier") << "dry_multiplier" << 0;
    QTest::newRow("dry_base") << "dry_base" << 1;
    QTest::newRow("dry_allowed_length") << "dry_allowed_length" << 2;
    QTest::newRow("dry_range") << "dry_range" << 3;
    QTest::newRow("dry_sequence_breakers") << "dry_sequence_breakers" << 4;
    QTest::newRow("xtc_threshold") << "xtc_threshold" << 5;
    QTest::newRow("xtc_probability") << "xtc_probability" << 6;
    QTest::newRow("top_n_sigma") << "top_n_sigma" << 7;
    QTest::newRow("mirostat") << "mirostat" << 8;
    QTest::newRow("mirostat_tau") << "mirostat_tau" << 9;
    QTest::newRow("mirostat_eta") << "mirostat_eta" << 10;
  }

  void rangesAreRefusedByName() {
    QFETCH(QString, setting);
    QFETCH(int, which);
    SamplingSettings s = plain_sampling();
    switch (which) {
      case 0:
        s.dry_multiplier = -0.1f;
        break;
      case 1:
        s.dry_base = 0.9f;
        break;
      case 2:
        s.dry_allowed_length = 0;
        break;
      case 3:
        s.dry_range = -1;
        break;
      case 4:
        s.dry_sequence_breakers = {"\n", ""};
        break;
      case 5:
        s.xtc_threshold = 1.5f;
        break;
      case 6:
        s.xtc_probability = -0.5f;
        break;
      case 7:
        s.top_n_sigma = INFINITY;
        break;
      case 8:
        s.mirostat = 1;
        break;
      case 9:
        s.mirostat_tau = 0;
        break;
      default:
        s.mirostat_eta = 1.5f;
        break;
    }
    try {
      Sampler sampler(s);
      QFAIL("the setting was accepted");
    } catch (const std::invalid_argument& error) {
      const std::string message = error.what();
      QVERIFY2(message.find("sampling setting " + setting.toStdString() + " ") != std::string::npos,
               message.c_str());
    }
  }

  void theDefaultsAreAccepted() {
    const SamplingSettings defaults;
    QVERIFY(!defaults.dry_on() && !defaults.xtc_on() && !defaults.top_n_sigma_on() &&
            !defaults.mirostat_on());
    Sampler sampler(defaults);
    QCOMPARE(sampler.mirostat_mu(), 10.0);
  }
};

QUIRE_TEST(TunedSamplersTest)
#include "test_tuned_samplers.moc"
