#include <QTest>
#include <cmath>
#include <string>
#include <vector>

#include "quire/engine/generator/sampler.h"
#include "test_main.h"
#include "tuned_sampler_support.h"

using quire::engine::Sampler;
using quire::engine::SamplingSettings;
using quire::test::last_distribution;
using quire::test::same_distribution;
using quire::test::softmax_over;

namespace {

using DryIds = std::vector<std::int32_t>;

SamplingSettings dry_sampling(int allowed_length) {
  SamplingSettings settings = quire::test::plain_sampling();
  settings.dry_multiplier = 0.8f;
  settings.dry_base = 1.75f;
  settings.dry_allowed_length = allowed_length;
  return settings;
}

// Eight tokens, all with logit 0 before DRY.
std::vector<float> flat_row() {
  return std::vector<float>(8, 0.0f);
}

// The flat row's distribution once the tokens in `penalties` lose that much.
std::map<std::int32_t, double> flat_with_penalties(
    const std::map<std::int32_t, double>& penalties) {
  std::vector<float> logits = flat_row();
  for (const auto& [id, penalty] : penalties)
    logits[static_cast<std::size_t>(id)] -= static_cast<float>(penalty);
  return softmax_over(logits, {0, 1, 2, 3, 4, 5, 6, 7});
}

// "1 2 3 4" was followed by 5 once; the context ends with "1 2 3 4" again.
const DryIds kRepeated{1, 2, 3, 4, 5, 6, 1, 2, 3, 4};

}  // namespace

class DrySamplerTest : public QObject {
  Q_OBJECT

 private slots:
  void offWhenTheMultiplierIsZero() {
    SamplingSettings settings = dry_sampling(2);
    settings.dry_multiplier = 0;
    Sampler sampler(settings);
    sampler.sample(flat_row(), kRepeated);
    QVERIFY(same_distribution(last_distribution(sampler), flat_with_penalties({})));
  }

  void penalizesTheTokenThatWouldContinueTheRepeat() {
    // The match is 4 tokens long: 0.8 * 1.75^(4 - 2).
    Sampler sampler(dry_sampling(2));
    sampler.sample(flat_row(), kRepeated);
    const double penalty = 0.8 * std::pow(1.75, 4 - 2);
    QVERIFY(same_distribution(last_distribution(sampler), flat_with_penalties({{5, penalty}})));
    QCOMPARE(sampler.last_logits()[5], -static_cast<float>(penalty));
    QCOMPARE(sampler.last_logits()[6], 0.0f);
  }

  void aMatchOfExactlyTheAllowedLengthGetsTheMultiplier() {
    Sampler sampler(dry_sampling(4));
    sampler.sample(flat_row(), kRepeated);
    QVERIFY(same_distribution(last_distribution(sampler), flat_with_penalties({{5, 0.8}})));
  }

  void aMatchShorterThanTheAllowedLengthIsFree() {
    Sampler sampler(dry_sampling(5));
    sampler.sample(flat_row(), kRepeated);
    QVERIFY(same_distribution(last_distribution(sampler), flat_with_penalties({})));
  }

  void aTokenTakesItsLongestMatch() {
    // "7 7 7 7": 7 followed matches of 1, 2 and 3 tokens; the longest counts.
    Sampler sampler(dry_sampling(2));
    sampler.sample(flat_row(), DryIds{7, 7, 7, 7});
    const double penalty = 0.8 * std::pow(1.75, 3 - 2);
    QVERIFY(same_distribution(last_distribution(sampler), flat_with_penalties({{7, penalty}})));
  }

  void severalTokensEachGetTheirOwnPenalty() {
    // "0 1 2 5 | 1 2 6 | 0 1 2": after "0 1 2" came 5 (match 3), after "1 2"
    // came 6 (match 2).
    Sampler sampler(dry_sampling(2));
    sampler.sample(flat_row(), DryIds{0, 1, 2, 5, 1, 2, 6, 0, 1, 2});
    const double five = 0.8 * std::pow(1.75, 1);
    const double six = 0.8;
    QVERIFY(
        same_distribution(last_distribution(sampler), flat_with_penalties({{5, five}, {6, six}})));
  }

  void aBreakerStopsTheMatch() {
    // Token 3 breaks sequences: only "4" lies after it, shorter than 2.
    Sampler sampler(dry_sampling(2));
    sampler.set_dry_breaker_tokens({3});
    sampler.sample(flat_row(), kRepeated);
    QVERIFY(same_distribution(last_distribution(sampler), flat_with_penalties({})));
    // With 1 allowed the match is cut to the one token after the breaker.
    Sampler one(dry_sampling(1));
    one.set_dry_breaker_tokens({3});
    one.sample(flat_row(), kRepeated);
    QVERIFY(same_distribution(last_distribution(one), flat_with_penalties({{5, 0.8}})));
  }

  void aBreakerIsNeverPenalized() {
    // "1 2" was followed by 3 before; 3 is a breaker, so drawing it is free.
    Sampler without(dry_sampling(2));
    without.sample(flat_row(), DryIds{1, 2, 3, 1, 2});
    QVERIFY(same_distribution(last_distribution(without), flat_with_penalties({{3, 0.8}})));
    Sampler with(dry_sampling(2));
    with.set_dry_breaker_tokens({3});
    with.sample(flat_row(), DryIds{1, 2, 3, 1, 2});
    QVERIFY(same_distribution(last_distribution(with), flat_with_penalties({})));
  }

  void theRangeLimitsTheSearch() {
    SamplingSettings settings = dry_sampling(2);
    settings.dry_range = 5;  // "6 1 2 3 4": no earlier 4
    Sampler near(settings);
    near.sample(flat_row(), kRepeated);
    QVERIFY(same_distribution(last_distribution(near), flat_with_penalties({})));
    settings.dry_range = 9;  // "2 3 4 5 6 1 2 3 4": the match is 3 long
    Sampler wider(settings);
    wider.sample(flat_row(), kRepeated);
    QVERIFY(same_distribution(last_distribution(wider), flat_with_penalties({{5, 0.8 * 1.75}})));
  }

  void contextTokensOutsideTheRowAreIgnored() {
    // 9 continues the repeat but the row has 8 tokens.
    Sampler sampler(dry_sampling(2));
    sampler.sample(flat_row(), DryIds{1, 2, 9, 1, 2});
    QVERIFY(same_distribution(last_distribution(sampler), flat_with_penalties({})));
  }

  void hugeMatchesStayFinite() {
    SamplingSettings settings = dry_sampling(2);
    settings.dry_base = 4;
    Sampler sampler(settings);
    const DryIds context(200, 7);  // 7 continues a 199-token match
    sampler.sample(flat_row(), context);
    QVERIFY(std::isfinite(sampler.last_logits()[7]));
    QVERIFY(sampler.last_logits()[7] < -1e30f);
    QCOMPARE(last_distribution(sampler).count(7), std::size_t{0});  // its weight underflows
  }

  void breakerTokensAreThoseWhoseTextContainsABreaker() {
    const std::vector<std::string> texts{"a", "b\n", ":x", "c", "", "say \"hi", "**"};
    const std::vector<std::string> breakers{"\n", ":", "\"", "*"};
    const std::vector<std::int32_t> found = quire::engine::dry_breaker_tokens(
        breakers, static_cast<std::int32_t>(texts.size()),
        [&texts](std::int32_t id) { return texts[static_cast<std::size_t>(id)]; });
    QCOMPARE(found, (DryIds{1, 2, 5, 6}));
    QVERIFY(quire::engine::dry_breaker_tokens({}, 7, [&texts](std::int32_t id) {
              return texts[static_cast<std::size_t>(id)];
            }).empty());
  }
};

QUIRE_TEST(DrySamplerTest)
#include "test_dry_sampler.moc"
