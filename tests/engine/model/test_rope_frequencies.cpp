#include <QTest>
#include <cmath>
#include <numbers>

#include "quire/engine/model/rope_frequencies.h"
#include "test_main.h"

using namespace quire::engine;

namespace {

ModelConfig config_with(int head_dim, double theta) {
  ModelConfig config;
  config.head_dim = head_dim;
  config.rope_theta = theta;
  return config;
}

}  // namespace

class RopeFrequenciesTest : public QObject {
  Q_OBJECT

 private slots:
  void defaultFrequencies() {
    // dim 4, theta 10000: 1 / 10000^(0/4), 1 / 10000^(2/4) = 1, 0.01.
    const RopeFrequencies rope = rope_frequencies(config_with(4, 10000.0), 1);
    QCOMPARE(rope.inv_freq.size(), std::size_t(2));
    QCOMPARE(rope.inv_freq[0], 1.0f);
    QCOMPARE(rope.inv_freq[1], 0.01f);
    QCOMPARE(rope.attention_factor, 1.0f);
  }

  void linearScalingDividesByTheFactor() {
    ModelConfig config = config_with(4, 10000.0);
    config.rope_scaling.type = RopeScaling::Type::Linear;
    config.rope_scaling.factor = 4.0;
    const RopeFrequencies rope = rope_frequencies(config, 1);
    QCOMPARE(rope.inv_freq[0], 0.25f);
    QCOMPARE(rope.inv_freq[1], 0.0025f);
  }

  void dynamicScalingStartsPastTheTrainedLength() {
    ModelConfig config = config_with(8, 10000.0);
    config.rope_scaling.type = RopeScaling::Type::Dynamic;
    config.rope_scaling.factor = 2.0;
    config.rope_scaling.original_max_position_embeddings = 100;
    const RopeFrequencies short_rope = rope_frequencies(config, 100);
    QCOMPARE(short_rope.inv_freq, rope_frequencies(config_with(8, 10000.0), 100).inv_freq);
    // At 200 tokens: base = 10000 * (2 * 200 / 100 - 1)^(8 / 6) = 10000 * 3^(4/3).
    const RopeFrequencies long_rope = rope_frequencies(config, 200);
    const double base = 10000.0 * std::pow(3.0, 8.0 / 6.0);
    QVERIFY(std::fabs(long_rope.inv_freq[1] - 1.0 / std::pow(base, 0.25)) < 1e-7);
    QVERIFY(rope_depends_on_length(config));
  }

  void llama3ScalesLowFrequenciesAndBlendsTheMiddle() {
    ModelConfig config = config_with(128, 500000.0);
    config.rope_scaling.type = RopeScaling::Type::Llama3;
    config.rope_scaling.factor = 8.0;
    config.rope_scaling.low_freq_factor = 1.0;
    config.rope_scaling.high_freq_factor = 4.0;
    config.rope_scaling.original_max_position_embeddings = 8192;
    const RopeFrequencies plain = rope_frequencies(config_with(128, 500000.0), 1);
    const RopeFrequencies scaled = rope_frequencies(config, 1);
    int kept = 0, divided = 0, blended = 0;
    for (std::size_t i = 0; i < plain.inv_freq.size(); ++i) {
      const double wavelength = 2 * std::numbers::pi / plain.inv_freq[i];
      if (wavelength < 8192.0 / 4.0) {
        QCOMPARE(scaled.inv_freq[i], plain.inv_freq[i]);
        ++kept;
      } else if (wavelength > 8192.0) {
        QCOMPARE(scaled.inv_freq[i], plain.inv_freq[i] / 8.0f);
        ++divided;
      } else {
        QVERIFY(scaled.inv_freq[i] < plain.inv_freq[i]);
        QVERIFY(scaled.inv_freq[i] > plain.inv_freq[i] / 8.0f);
        ++blended;
      }
    }
    // Llama 3's frequencies fall into all three bands.
    QVERIFY(kept > 0 && divided > 0 && blended > 0);
  }

  void partialRotaryFactorShortensTheTable() {
    ModelConfig config = config_with(64, 10000.0);
    config.partial_rotary_factor = 0.5;
    QCOMPARE(rope_frequencies(config, 1).inv_freq.size(), std::size_t(16));
  }
};

QUIRE_TEST(RopeFrequenciesTest)
#include "test_rope_frequencies.moc"
