// Rotary tables of published configs against transformers' computation:
// tests/tools/reference_forward.py --rope (PyTorch, float32 as transformers
// computes them) gave the values below for tests/data/configs/*.json.
// Regenerate with:
//   mkdir m && cp tests/data/configs/NAME.json m/config.json &&
//   tests/tools/reference_forward.py m --rope 10
//
// torch raises float32 powers with its own vectorized pow, which may round the
// last bit differently from the C library's powf; every other step is
// float32 arithmetic in the same order, so values may differ by one unit in
// the last place and no more.

#include <QFile>
#include <QTest>
#include <bit>
#include <cstdint>
#include <cstdlib>

#include "quire/engine/model/model_config.h"
#include "quire/engine/model/rope_frequencies.h"
#include "test_main.h"

using namespace quire::engine;

namespace {

ModelConfig load(const char* name) {
  const QString path = QStringLiteral(QUIRE_TEST_DATA_DIR "/configs/") + QLatin1String(name);
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly))
    throw std::runtime_error("cannot read " + path.toStdString());
  return parse_model_config(file.readAll().toStdString(), path.toStdString());
}

// Units in the last place between two positive floats.
std::int64_t ulps(float a, float b) {
  return std::llabs(static_cast<std::int64_t>(std::bit_cast<std::int32_t>(a)) -
                    static_cast<std::int64_t>(std::bit_cast<std::int32_t>(b)));
}

void compare(const RopeFrequencies& actual, const std::vector<float>& expected,
             float attention_factor) {
  QCOMPARE(actual.inv_freq.size(), expected.size());
  QCOMPARE(actual.attention_factor, attention_factor);
  int exact = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const std::int64_t distance = ulps(actual.inv_freq[i], expected[i]);
    QVERIFY2(distance <= 1, qPrintable(QStringLiteral("inv_freq[%1]: %2 vs reference %3")
                                           .arg(i)
                                           .arg(double(actual.inv_freq[i]), 0, 'g', 9)
                                           .arg(double(expected[i]), 0, 'g', 9)));
    exact += distance == 0 ? 1 : 0;
  }
  qInfo("%d of %d frequencies bit for bit equal", exact, int(expected.size()));
}

// Qwen2.5-7B-Instruct with {"type": "yarn", "factor": 4.0,
// "original_max_position_embeddings": 32768}.
const std::vector<float> kQwenYarn = {
    0x1p+0f,         0x1.9c975ap-1f,  0x1.4c7bcp-1f,   0x1.0beddep-1f,  0x1.afd136p-2f,
    0x1.5bf9fep-2f,  0x1.186a08p-2f,  0x1.c3f06ap-3f,  0x1.6c310ep-3f,  0x1.257b22p-3f,
    0x1.d8ffacp-4f,  0x1.7d298cp-4f,  0x1.33281ap-4f,  0x1.ef0a26p-5f,  0x1.8eec7ep-5f,
    0x1.41783ap-5f,  0x1.030dc6p-5f,  0x1.a1835p-6f,   0x1.507316p-6f,  0x1.0f201p-6f,
    0x1.b4f7e4p-7f,  0x1.6020a4p-7f,  0x1.1bc25ap-7f,  0x1.c9548cp-8f,  0x1.6046eep-8f,
    0x1.0ec71p-8f,   0x1.9f4aap-9f,   0x1.3da49p-9f,   0x1.e483bep-10f, 0x1.70578p-10f,
    0x1.17040ep-10f, 0x1.a4fb7p-11f,  0x1.3c1d64p-11f, 0x1.d832dp-12f,  0x1.5e7a04p-12f,
    0x1.02387cp-12f, 0x1.79277cp-13f, 0x1.107c7p-13f,  0x1.847d34p-14f, 0x1.103a14p-14f,
    0x1.74eea6p-15f, 0x1.2c8648p-15f, 0x1.e459c4p-16f, 0x1.864f6ap-16f, 0x1.3a8748p-16f,
    0x1.faeba8p-17f, 0x1.987f7cp-17f, 0x1.492f56p-17f, 0x1.094564p-17f, 0x1.ab8882p-18f,
    0x1.58863ap-18f, 0x1.15a1dap-18f, 0x1.bf749ep-19f, 0x1.68941cp-19f, 0x1.2291c6p-19f,
    0x1.d44e64p-20f, 0x1.796182p-20f, 0x1.301c04p-20f, 0x1.ea20ep-21f,  0x1.8af756p-21f,
    0x1.3e47c8p-21f, 0x1.007bd8p-21f, 0x1.9d5ef2p-22f, 0x1.4d1c98p-22f};

// Llama-3.1-8B-Instruct: llama3, factor 8, theta 500000.
const std::vector<float> kLlama31 = {
    0x1p+0f,         0x1.a11582p-1f,  0x1.53c38cp-1f,  0x1.14c708p-1f,  0x1.c2ef78p-2f,
    0x1.6f56fap-2f,  0x1.2b3dc6p-2f,  0x1.e788c2p-3f,  0x1.8d276p-3f,   0x1.43874p-3f,
    0x1.078d4p-3f,   0x1.ad6338p-4f,  0x1.5dc95ap-4f,  0x1.1cf13p-4f,   0x1.d03ccep-5f,
    0x1.7a2d08p-5f,  0x1.34119p-5f,   0x1.f5ea7ep-6f,  0x1.98de92p-6f,  0x1.4d1272p-6f,
    0x1.0f5386p-6f,  0x1.ba0dd8p-7f,  0x1.681adap-7f,  0x1.2558fep-7f,  0x1.ddee9ep-8f,
    0x1.8554ecp-8f,  0x1.3d2804p-8f,  0x1.025c6ap-8f,  0x1.a4ee4p-9f,   0x1.1bfa0cp-9f,
    0x1.67a23ap-10f, 0x1.c12f3cp-11f, 0x1.132ba4p-11f, 0x1.47e21p-12f,  0x1.765ba4p-13f,
    0x1.90d10cp-14f, 0x1.46831ap-14f, 0x1.09fb7ep-14f, 0x1.b15902p-15f, 0x1.610332p-15f,
    0x1.1f91fp-15f,  0x1.d484dep-16f, 0x1.7da9e8p-16f, 0x1.36e8eap-16f, 0x1.fa8b86p-17f,
    0x1.9ca3eap-17f, 0x1.5024d6p-17f, 0x1.11d41ep-17f, 0x1.be2188p-18f, 0x1.6b6d0ep-18f,
    0x1.280d96p-18f, 0x1.e257p-19f,   0x1.88ec2p-19f,  0x1.4014d2p-19f, 0x1.04be68p-19f,
    0x1.a8d01p-20f,  0x1.5a0f4ep-20f, 0x1.19e8p-20f,   0x1.cb4a9ap-21f, 0x1.76258ep-21f,
    0x1.30c94ep-21f, 0x1.f09184p-22f, 0x1.94836p-22f,  0x1.4985fep-22f};

// Llama-3.2-3B-Instruct: llama3, factor 32.
const std::vector<float> kLlama32 = {
    0x1p+0f,         0x1.a11582p-1f,  0x1.53c38cp-1f,  0x1.14c708p-1f,  0x1.c2ef78p-2f,
    0x1.6f56fap-2f,  0x1.2b3dc6p-2f,  0x1.e788c2p-3f,  0x1.8d276p-3f,   0x1.43874p-3f,
    0x1.078d4p-3f,   0x1.ad6338p-4f,  0x1.5dc95ap-4f,  0x1.1cf13p-4f,   0x1.d03ccep-5f,
    0x1.7a2d08p-5f,  0x1.34119p-5f,   0x1.f5ea7ep-6f,  0x1.98de92p-6f,  0x1.4d1272p-6f,
    0x1.0f5386p-6f,  0x1.ba0dd8p-7f,  0x1.681adap-7f,  0x1.2558fep-7f,  0x1.ddee9ep-8f,
    0x1.8554ecp-8f,  0x1.3d2804p-8f,  0x1.025c6ap-8f,  0x1.a4ee4p-9f,   0x1.15a9fp-9f,
    0x1.524f36p-10f, 0x1.8fca8ep-11f, 0x1.c26c4p-12f,  0x1.d32b32p-13f, 0x1.9731eep-14f,
    0x1.90d10cp-16f, 0x1.46831ap-16f, 0x1.09fb7ep-16f, 0x1.b15902p-17f, 0x1.610332p-17f,
    0x1.1f91fp-17f,  0x1.d484dep-18f, 0x1.7da9e8p-18f, 0x1.36e8eap-18f, 0x1.fa8b86p-19f,
    0x1.9ca3eap-19f, 0x1.5024d6p-19f, 0x1.11d41ep-19f, 0x1.be2188p-20f, 0x1.6b6d0ep-20f,
    0x1.280d96p-20f, 0x1.e257p-21f,   0x1.88ec2p-21f,  0x1.4014d2p-21f, 0x1.04be68p-21f,
    0x1.a8d01p-22f,  0x1.5a0f4ep-22f, 0x1.19e8p-22f,   0x1.cb4a9ap-23f, 0x1.76258ep-23f,
    0x1.30c94ep-23f, 0x1.f09184p-24f, 0x1.94836p-24f,  0x1.4985fep-24f};

}  // namespace

class RopeReferenceTest : public QObject {
  Q_OBJECT

 private slots:
  void yarnOfQwen25() {
    compare(rope_frequencies(load("qwen2.5-7b-instruct-yarn.json"), 10), kQwenYarn, 0x1.237d38p+0f);
  }

  void llama3OfLlama31() {
    compare(rope_frequencies(load("llama-3.1-8b-instruct.json"), 10), kLlama31, 1.0f);
  }

  void llama3OfLlama32() {
    compare(rope_frequencies(load("llama-3.2-3b-instruct.json"), 10), kLlama32, 1.0f);
  }

  void yarnAttentionFactorFollowsMscale() {
    ModelConfig config;
    config.head_dim = 64;
    config.rope_theta = 10000.0;
    config.max_position_embeddings = 4096;
    config.rope_scaling.type = RopeScaling::Type::Yarn;
    config.rope_scaling.factor = 40.0;
    config.rope_scaling.original_max_position_embeddings = 4096;
    // 0.1 ln(40) + 1
    QCOMPARE(rope_frequencies(config, 1).attention_factor,
             static_cast<float>(0.1 * std::log(40.0) + 1.0));
    // DeepSeek's pair: (0.1 * 0.707 ln 40 + 1) / (0.1 * 0.707 ln 40 + 1) = 1.
    config.rope_scaling.mscale = 0.707;
    config.rope_scaling.mscale_all_dim = 0.707;
    QCOMPARE(rope_frequencies(config, 1).attention_factor, 1.0f);
    config.rope_scaling.attention_factor = 0.5;
    QCOMPARE(rope_frequencies(config, 1).attention_factor, 0.5f);
  }

  void yarnKeepsHighAndInterpolatesLowFrequencies() {
    const ModelConfig config = load("qwen2.5-7b-instruct-yarn.json");
    ModelConfig plain = config;
    plain.rope_scaling = {};
    const RopeFrequencies scaled = rope_frequencies(config, 1);
    const RopeFrequencies base = rope_frequencies(plain, 1);
    QCOMPARE(scaled.inv_freq.front(), base.inv_freq.front());
    QCOMPARE(scaled.inv_freq.back(), base.inv_freq.back() / 4.0f);
  }
};

QUIRE_TEST(RopeReferenceTest)
#include "test_rope_reference.moc"
