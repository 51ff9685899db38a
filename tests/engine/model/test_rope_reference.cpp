// Rotary tables of published configs against transformers' computation:
// tests/tools/reference_forward.py --rope (PyTorch, float32 as transformers
// computes them) gave the values below for tests/data/configs/*.json
// (--rope 4096 and 4097 for Phi-3.5 and Phi-4-mini; Gemma 3 prints its local
// layers too).
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

// Phi-3.5-mini-instruct: longrope over 96 rotary dimensions, the short
// factors for 4096 tokens and the long ones from 4097.
const std::vector<float> kPhi35Short = {
    0x1p+0f,         0x1.9e520ep-1f,  0x1.52a966p-1f,  0x1.178864p-1f,  0x1.c4aa5cp-2f,
    0x1.75a1c8p-2f,  0x1.3465bap-2f,  0x1.fd1adep-3f,  0x1.a437a6p-3f,  0x1.545db4p-3f,
    0x1.11470ep-3f,  0x1.bf108cp-4f,  0x1.611a7ep-4f,  0x1.2373fep-4f,  0x1.dd0564p-5f,
    0x1.651bccp-5f,  0x1.1bc2aap-5f,  0x1.75a1ccp-6f,  0x1.217214p-6f,  0x1.d5f16ap-7f,
    0x1.7d9a58p-7f,  0x1.35f34ap-7f,  0x1.f7a1c8p-8f,  0x1.99458ap-8f,  0x1.4953a2p-8f,
    0x1.0bca66p-8f,  0x1.ba1224p-9f,  0x1.6ce31ep-9f,  0x1.2d2df2p-9f,  0x1.f1307ap-10f,
    0x1.9a61ep-10f,  0x1.51100cp-10f, 0x1.16367ep-10f, 0x1.cb46b4p-11f, 0x1.7b16acp-11f,
    0x1.38e6b2p-11f, 0x1.02451ep-11f, 0x1.aa5ab6p-12f, 0x1.5fea1cp-12f, 0x1.2278c6p-12f,
    0x1.d3fc9p-13f,  0x1.806ep-13f,   0x1.2ed228p-13f, 0x1.ed24dep-14f, 0x1.5ce4dcp-14f,
    0x1.1135e2p-14f, 0x1.bfbcf2p-15f, 0x1.65da6cp-15f};
const std::vector<float> kPhi35Long = {
    0x1.da12f6p-1f,  0x1.7cba18p-1f,  0x1.31fbdap-1f,  0x1.adbabep-2f,  0x1.2aee16p-2f,
    0x1.ea6452p-3f,  0x1.8fc63cp-3f,  0x1.980faap-4f,  0x1.1134dp-4f,   0x1.c302e6p-5f,
    0x1.f60e06p-6f,  0x1.0c3d1ep-6f,  0x1.a98ef6p-7f,  0x1.298b88p-7f,  0x1.6dfa0cp-8f,
    0x1.a121c2p-9f,  0x1.f17364p-10f, 0x1.5f87cep-10f, 0x1.108248p-10f, 0x1.bbbbc2p-11f,
    0x1.5a97a2p-11f, 0x1.1b1ffcp-11f, 0x1.6bae62p-12f, 0x1.1a8ebep-12f, 0x1.a098f6p-13f,
    0x1.571c94p-13f, 0x1.f0885cp-14f, 0x1.9726dcp-14f, 0x1.4e72c6p-14f, 0x1.0b3224p-14f,
    0x1.a7b022p-15f, 0x1.5da878p-15f, 0x1.2031e6p-15f, 0x1.d883c4p-16f, 0x1.860404p-16f,
    0x1.3ebd76p-16f, 0x1.066e58p-16f, 0x1.b1052cp-17f, 0x1.655c56p-17f, 0x1.26b0dp-17f,
    0x1.e62c98p-18f, 0x1.913a3ap-18f, 0x1.4af7ep-18f,  0x1.0ff3e2p-18f, 0x1.c07446p-19f,
    0x1.71fbe2p-19f, 0x1.314aacp-19f, 0x1.f59182p-20f};

// Phi-4-mini-instruct: longrope over the first 96 of 128 dimensions of each
// head (partial_rotary_factor 0.75), 48 factors each; the short ones are all
// 1 (the plain frequencies), the long ones from 4097 tokens.
const std::vector<float> kPhi4MiniShort = {
    0x1p+0f,         0x1.a69b6p-1f,   0x1.5cd25p-1f,   0x1.1feb34p-1f,  0x1.db4c78p-2f,
    0x1.885044p-2f,  0x1.43d136p-2f,  0x1.0b47b4p-2f,  0x1.b93a6ap-3f,  0x1.6c310ep-3f,
    0x1.2c9af4p-3f,  0x1.f03ddep-4f,  0x1.99999ap-4f,  0x1.5215e6p-4f,  0x1.170ea8p-4f,
    0x1.ccab84p-5f,  0x1.7c3d2ap-5f,  0x1.39d9d2p-5f,  0x1.030dc6p-5f,  0x1.aba5ecp-6f,
    0x1.60fb8ep-6f,  0x1.235a72p-6f,  0x1.e0f7ecp-7f,  0x1.8cfe5p-7f,   0x1.47ae14p-7f,
    0x1.0e77fp-7f,   0x1.be7dd2p-8f,  0x1.708938p-8f,  0x1.3030f4p-8f,  0x1.f62946p-9f,
    0x1.9e7c7p-9f,   0x1.561e5cp-9f,  0x1.1a62d2p-9f,  0x1.d22a5p-10f,  0x1.80c65cp-10f,
    0x1.3d983ap-10f, 0x1.0624dep-10f, 0x1.b0bfe4p-11f, 0x1.653174p-11f, 0x1.26d42cp-11f,
    0x1.e6b4b8p-12f, 0x1.91ba9ep-12f, 0x1.4b96cp-12f,  0x1.11b1e4p-12f, 0x1.c3d14ep-13f,
    0x1.74eea6p-13f, 0x1.33d1e4p-13f, 0x1.fc26c6p-14f};
const std::vector<float> kPhi4MiniLong = {
    0x1p+0f,         0x1.79e4ecp-1f,  0x1.16ea08p-1f,  0x1.9bb81p-2f,   0x1.2fe11ep-2f,
    0x1.c09242p-3f,  0x1.4b1444p-3f,  0x1.e8b8e8p-4f,  0x1.68b6a8p-4f,  0x1.0a3bcap-4f,
    0x1.89002p-5f,   0x1.22104cp-5f,  0x1.ac2d66p-6f,  0x1.3c06ep-6f,   0x1.d280c2p-7f,
    0x1.58505ep-7f,  0x1.fc424p-8f,   0x1.77220ep-8f,  0x1.14e04cp-8f,  0x1.98b5e8p-9f,
    0x1.2da8b2p-9f,  0x1.bd4b3p-10f,  0x1.48a8f4p-10f, 0x1.e526b8p-11f, 0x1.6613eep-11f,
    0x1.0849ccp-11f, 0x1.8620f8p-12f, 0x1.1ff1bap-12f, 0x1.a90c7cp-13f, 0x1.39b7b6p-13f,
    0x1.cf181ep-14f, 0x1.55cc54p-14f, 0x1.19819ep-14f, 0x1.d04776p-15f, 0x1.7e076ep-15f,
    0x1.37bfd6p-15f, 0x1.013d88p-15f, 0x1.a843aap-16f, 0x1.5df998p-16f, 0x1.20847ap-16f,
    0x1.dc243ep-17f, 0x1.86622ap-17f, 0x1.41d552p-17f, 0x1.072b0cp-17f, 0x1.afb73ep-18f,
    0x1.643bd8p-18f, 0x1.be1da2p-19f, 0x1.546612p-19f};

// gemma-3-4b-it: global layers at theta 1e6 with linear scaling by 8, local
// layers at rope_local_base_freq 10000 unscaled.
const std::vector<float> kGemma3Global = {
    0x1p-3f,         0x1.cb9da6p-4f,  0x1.9c975ap-4f,  0x1.7260b8p-4f,  0x1.4c7bcp-4f,
    0x1.2a775p-4f,   0x1.0beddep-4f,  0x1.e10878p-5f,  0x1.afd136p-5f,  0x1.83a304p-5f,
    0x1.5bf9fep-5f,  0x1.385fc2p-5f,  0x1.186a08p-5f,  0x1.f772c8p-6f,  0x1.c3f06ap-6f,
    0x1.95b33p-6f,   0x1.6c310ep-6f,  0x1.46ee1ep-6f,  0x1.257b22p-6f,  0x1.07744p-6f,
    0x1.d8ffacp-7f,  0x1.a89ad8p-7f,  0x1.7d298cp-7f,  0x1.562a1ep-7f,  0x1.33281ap-7f,
    0x1.13bb08p-7f,  0x1.ef0a26p-8f,  0x1.bc6402p-8f,  0x1.8eec7ep-8f,  0x1.661bd8p-8f,
    0x1.41783ap-8f,  0x1.209442p-8f,  0x1.030dc6p-8f,  0x1.d11936p-9f,  0x1.a1835p-9f,
    0x1.76cbc6p-9f,  0x1.507316p-9f,  0x1.2e06c4p-9f,  0x1.0f201p-9f,   0x1.e6c572p-10f,
    0x1.b4f7e4p-10f, 0x1.8842c6p-10f, 0x1.6020a4p-10f, 0x1.3c19aep-10f, 0x1.1bc25ap-10f,
    0x1.fd7436p-11f, 0x1.c9548cp-11f, 0x1.9a8a1cp-11f, 0x1.708938p-11f, 0x1.4ad47ep-11f,
    0x1.28fb5cp-11f, 0x1.0a98c8p-11f, 0x1.dea41cp-12f, 0x1.adab7ep-12f, 0x1.81b58ap-12f,
    0x1.5a3f02p-12f, 0x1.36d21ap-12f, 0x1.17050ep-12f, 0x1.f4f1ep-13f,  0x1.c1b116p-13f,
    0x1.93aeb8p-13f, 0x1.6a616ep-13f, 0x1.454deep-13f, 0x1.240586p-13f, 0x1.0624dep-13f,
    0x1.d6a586p-14f, 0x1.a67e5p-14f,  0x1.7b4452p-14f, 0x1.547688p-14f, 0x1.31a116p-14f,
    0x1.125c04p-14f, 0x1.ec93fp-15f,  0x1.ba2e4ap-15f, 0x1.8cf0a6p-15f, 0x1.6453f6p-15f,
    0x1.3fdefcp-15f, 0x1.1f24e4p-15f, 0x1.01c3fcp-15f, 0x1.cec924p-16f, 0x1.9f6fcep-16f,
    0x1.74eea6p-16f, 0x1.4ec6c6p-16f, 0x1.2c8648p-16f, 0x1.0dc6e8p-16f, 0x1.e459c4p-17f,
    0x1.b2cb9cp-17f, 0x1.864f6ap-17f, 0x1.5e605ep-17f, 0x1.3a8748p-17f, 0x1.1a591ep-17f,
    0x1.faeba8p-18f, 0x1.c70e58p-18f, 0x1.987f7cp-18f, 0x1.6eb41p-18f,  0x1.492f56p-18f,
    0x1.27814ap-18f, 0x1.094564p-18f, 0x1.dc42cap-19f, 0x1.ab8882p-19f, 0x1.7fca84p-19f,
    0x1.58863ap-19f, 0x1.35466ap-19f, 0x1.15a1dap-19f, 0x1.f2742ap-20f, 0x1.bf749ep-20f,
    0x1.91acd2p-20f, 0x1.68941cp-20f, 0x1.43afcep-20f, 0x1.2291c6p-20f, 0x1.04d726p-20f,
    0x1.d44e64p-21f, 0x1.a46476p-21f, 0x1.796182p-21f, 0x1.52c51cp-21f, 0x1.301c04p-21f,
    0x1.10fecp-21f,  0x1.ea20ep-22f,  0x1.b7fb64p-22f, 0x1.8af756p-22f, 0x1.628e58p-22f,
    0x1.3e47c8p-22f, 0x1.1db75ap-22f, 0x1.007bd8p-22f, 0x1.cc7bfep-23f, 0x1.9d5ef2p-23f,
    0x1.7313e4p-23f, 0x1.4d1c98p-23f, 0x1.2b07b4p-23f};
const std::vector<float> kGemma3Local = {
    0x1p+0f,         0x1.dc73fp-1f,   0x1.bb5faep-1f,  0x1.9c975ap-1f,  0x1.7ff222p-1f,
    0x1.654a0cp-1f,  0x1.4c7bcp-1f,   0x1.356656p-1f,  0x1.1feb34p-1f,  0x1.0beddep-1f,
    0x1.f2a79ep-2f,  0x1.d008bep-2f,  0x1.afd136p-2f,  0x1.91d648p-2f,  0x1.75f036p-2f,
    0x1.5bf9fep-2f,  0x1.43d136p-2f,  0x1.2d55d4p-2f,  0x1.186a08p-2f,  0x1.04f212p-2f,
    0x1.e5a846p-3f,  0x1.c3f06ap-3f,  0x1.a48fdap-3f,  0x1.875cf8p-3f,  0x1.6c310ep-3f,
    0x1.52e812p-3f,  0x1.3b608p-3f,   0x1.257b22p-3f,  0x1.111aeep-3f,  0x1.fc49cp-4f,
    0x1.d8ffacp-4f,  0x1.b828ccp-4f,  0x1.99999ap-4f,  0x1.7d298cp-4f,  0x1.62b2fp-4f,
    0x1.4a12acp-4f,  0x1.33281ap-4f,  0x1.1dd4d6p-4f,  0x1.09fc9ap-4f,  0x1.ef0a26p-5f,
    0x1.ccab84p-5f,  0x1.acafc8p-5f,  0x1.8eec7ep-5f,  0x1.733a32p-5f,  0x1.59742ap-5f,
    0x1.41783ap-5f,  0x1.2b269p-5f,   0x1.166198p-5f,  0x1.030dc6p-5f,  0x1.e222eep-6f,
    0x1.c0a9a4p-6f,  0x1.a1835p-6f,   0x1.84869ep-6f,  0x1.698d22p-6f,  0x1.507316p-6f,
    0x1.39172ep-6f,  0x1.235a72p-6f,  0x1.0f201p-6f,   0x1.f89a66p-7f,  0x1.d591cep-7f,
    0x1.b4f7e4p-7f,  0x1.96a166p-7f,  0x1.7a6622p-7f,  0x1.6020a4p-7f,  0x1.47ae14p-7f,
    0x1.30ee0ap-7f,  0x1.1bc25ap-7f,  0x1.080ef2p-7f,  0x1.eb736p-8f,   0x1.c9548cp-8f,
    0x1.a9942ap-8f,  0x1.8c081ep-8f,  0x1.708938p-8f,  0x1.56f306p-8f,  0x1.3f2398p-8f,
    0x1.28fb5cp-8f,  0x1.145ceep-8f,  0x1.012cfap-8f,  0x1.dea41cp-9f,  0x1.bd68f4p-9f,
    0x1.9e7c7p-9f,   0x1.81b58ap-9f,  0x1.66ee1ep-9f,  0x1.4e02a6p-9f,  0x1.36d21ap-9f,
    0x1.213db6p-9f,  0x1.0d28dep-9f,  0x1.f4f1ep-10f,  0x1.d22a5p-10f,  0x1.b1cce6p-10f,
    0x1.93aeb8p-10f, 0x1.77a7dap-10f, 0x1.5d931cp-10f, 0x1.454deep-10f, 0x1.2eb81cp-10f,
    0x1.19b3b6p-10f, 0x1.0624dep-10f, 0x1.e7e346p-11f, 0x1.c603c4p-11f, 0x1.a67e5p-11f,
    0x1.892918p-11f, 0x1.6ddd3cp-11f, 0x1.547688p-11f, 0x1.3cd34ap-11f, 0x1.26d42cp-11f,
    0x1.125c04p-11f, 0x1.fe9f58p-12f, 0x1.db2bc4p-12f, 0x1.ba2e4ap-12f, 0x1.9b7b2cp-12f,
    0x1.7ee9aep-12f, 0x1.6453f6p-12f, 0x1.4b96cp-12f,  0x1.34913cp-12f, 0x1.1f24e4p-12f,
    0x1.0b3552p-12f, 0x1.f1502ap-13f, 0x1.cec924p-13f, 0x1.aea7c8p-13f, 0x1.90c182p-13f,
    0x1.74eea6p-13f, 0x1.5b0a52p-13f, 0x1.42f22cp-13f, 0x1.2c8648p-13f, 0x1.17a8e4p-13f,
    0x1.043e56p-13f, 0x1.e459c4p-14f, 0x1.c2b922p-14f};

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

  void longropeOfPhi35SwitchesPastTheOriginalContext() {
    const ModelConfig config = load("phi-3.5-mini-instruct.json");
    compare(rope_frequencies(config, 4096), kPhi35Short, 0x1.30b372p+0f);
    compare(rope_frequencies(config, 4097), kPhi35Long, 0x1.30b372p+0f);
  }

  // The attention factor as Phi-3.5's: sqrt(1 + ln 32 / ln 4096), the same
  // 131072 positions over an original 4096.
  void longropeOfPhi4MiniRotatesThreeQuartersOfEachHead() {
    const ModelConfig config = load("phi-4-mini-instruct.json");
    compare(rope_frequencies(config, 4096), kPhi4MiniShort, 0x1.30b372p+0f);
    compare(rope_frequencies(config, 4097), kPhi4MiniLong, 0x1.30b372p+0f);
  }

  void gemma3RotatesLocalAndGlobalLayersApart() {
    const ModelConfig config = load("gemma-3-4b-it.json");
    compare(rope_frequencies(config, 10), kGemma3Global, 1.0f);
    compare(local_rope_frequencies(config), kGemma3Local, 1.0f);
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
