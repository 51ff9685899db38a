#include <QTest>
#include <memory>
#include <random>

#include "formats_test_support.h"
#include "quire/engine/formats/gptq_layout.h"
#include "quire/engine/formats/gptq_writer.h"
#include "test_main.h"

using namespace quire::engine::formats;
using quire::kernels::DType;
using quire::test::kLayerKey;

namespace {

// A consistent layer (64 outputs, 128 inputs in groups of 32, act-order),
// then one change.
struct Broken {
  GptqEncoding encoding;
  GptqTensors tensors;
  GptqOptions options;
  LinearShape shape;
  std::vector<std::uint32_t> words;
  std::vector<std::int32_t> indices;
  std::vector<std::uint16_t> halves;
};

std::unique_ptr<Broken> broken(const QByteArray& change) {
  auto b = std::make_unique<Broken>();
  std::mt19937 rng(1);
  const std::vector<float> w = quire::test::random_matrix(rng, 64, 128);
  b->encoding = quantize_gptq(w, 64, 128, {32, 5, false, true});
  GptqTensors& t = b->tensors;
  t = b->encoding.views();
  GptqEncoding& e = b->encoding;
  if (change == "3 bits") b->options.bits = 3;
  if (change == "2 bits by the shape") b->shape.in_features = 256;
  if (change == "qweight dtype") t.qweight.dtype = DType::F32;
  if (change == "scales dtype") t.scales.dtype = DType::BF16;
  if (change == "config inputs") b->shape.in_features = 100;
  if (change == "config outputs") b->shape.out_features = 32;
  if (change == "outputs not multiple of 8") t.qweight.shape = {256, 4};
  if (change == "qzeros columns") {
    b->words.assign(4 * 7, 0u);
    t.qzeros = {DType::I32, {4, 7}, std::as_bytes(std::span(b->words))};
  }
  if (change == "scales rows") t.scales.shape = {2, 128};
  if (change == "more groups than inputs") {
    b->words.assign(129 * 8, 0u);
    t.qzeros = {DType::I32, {129, 8}, std::as_bytes(std::span(b->words))};
  }
  if (change == "g_idx length") t.g_idx->shape = {127}, t.g_idx->bytes = t.g_idx->bytes.first(508);
  if (change == "g_idx range") e.g_idx[5] = 9;
  if (change == "bias length") {
    b->halves.assign(60, 0x3c00);
    t.bias = TensorView{DType::F16, {60}, std::as_bytes(std::span(b->halves))};
  }
  if (change == "empty") t.qweight.shape = {0, 64}, t.qweight.bytes = {};
  return b;
}

}  // namespace

class GptqLayoutTest : public QObject {
  Q_OBJECT

 private slots:
  // Group size: the smallest power of two with group_size * G >= K.
  void groupSizeFollowsFromTheGroupCount_data() {
    QTest::addColumn<int>("inputs");
    QTest::addColumn<int>("writtenSize");
    QTest::addColumn<int>("groups");
    QTest::addColumn<int>("describedSize");
    QTest::newRow("128 in 32s") << 128 << 32 << 4 << 32;
    QTest::newRow("320 in 128s, last partial") << 320 << 128 << 3 << 128;
    QTest::newRow("one group of 256") << 256 << 256 << 1 << 256;
    QTest::newRow("96 in one group of 128") << 96 << 128 << 1 << 128;
    QTest::newRow("per row groups of 8") << 64 << 8 << 8 << 8;
  }

  void groupSizeFollowsFromTheGroupCount() {
    QFETCH(int, inputs);
    QFETCH(int, writtenSize);
    QFETCH(int, groups);
    QFETCH(int, describedSize);
    std::mt19937 rng(9);
    const std::vector<float> w = quire::test::random_matrix(rng, 16, inputs);
    const GptqEncoding encoding = quantize_gptq(w, 16, inputs, {writtenSize, {}, false, true});
    const GptqLayout layout = describe_gptq(kLayerKey, encoding.views(), {});
    QCOMPARE(layout.groups, groups);
    QCOMPARE(layout.group_size, describedSize);
    QVERIFY(layout.g_idx.empty());  // written, but trivial
    QCOMPARE(layout.in_features, std::int64_t(inputs));
    QCOMPARE(layout.out_features, std::int64_t(16));
  }

  void actOrderIsKeptAndZerosFollowTheOption() {
    std::mt19937 rng(4);
    const std::vector<float> w = quire::test::random_matrix(rng, 32, 256);
    const GptqEncoding encoding = quantize_gptq(w, 32, 256, {64, 11, true, true});
    const GptqLayout v2 = describe_gptq(kLayerKey, encoding.views(), {4, true}, {256, 32});
    QCOMPARE(v2.g_idx, encoding.g_idx);
    QVERIFY(v2.exact_zeros);
    QVERIFY(!describe_gptq(kLayerKey, encoding.views(), {}).exact_zeros);
  }

  // 8 bits: four values to a qweight word and a qzeros word. With the
  // layer's inputs known the width follows from qweight's rows (GPTQModel's
  // per-module overrides may differ from the config's "bits").
  void eightBitLayersFollowTheirRows() {
    std::mt19937 rng(6);
    const std::vector<float> w = quire::test::random_matrix(rng, 32, 128);
    GptqQuantizeOptions options{32, 3, true, true};
    options.bits = 8;
    const GptqEncoding encoding = quantize_gptq(w, 32, 128, options);
    QCOMPARE(encoding.views().qweight.shape, (std::vector<std::int64_t>{32, 32}));
    QCOMPARE(encoding.views().qzeros.shape, (std::vector<std::int64_t>{4, 8}));
    const GptqLayout by_config = describe_gptq(kLayerKey, encoding.views(), {8, true});
    const GptqLayout by_rows = describe_gptq(kLayerKey, encoding.views(), {4, true}, {128, 32});
    for (const GptqLayout* layout : {&by_config, &by_rows}) {
      QCOMPARE(layout->bits, 8);
      QCOMPARE(layout->in_features, std::int64_t(128));
      QCOMPARE(layout->groups, 4);
      QCOMPARE(layout->g_idx, encoding.g_idx);
    }
    // Device bytes: qweight, qzeros and FP16 scales as stored, and g_idx.
    QCOMPARE(by_rows.device_bytes(), std::int64_t(32 * 32 * 4 + 4 * 8 * 4 + 4 * 32 * 2 + 128 * 4));
  }

  // Some quantizers write an all-zero g_idx for "no act-order"; exllamav2
  // reads it as absent, and so does Quire.
  void allZeroGroupIndexMeansNone() {
    std::mt19937 rng(4);
    const std::vector<float> w = quire::test::random_matrix(rng, 16, 128);
    GptqEncoding encoding = quantize_gptq(w, 16, 128, {32, {}, false, true});
    std::fill(encoding.g_idx.begin(), encoding.g_idx.end(), 0);
    QVERIFY(describe_gptq(kLayerKey, encoding.views(), {}).g_idx.empty());
  }

  void errorsNameTheLayerAndTheProblem_data() {
    QTest::addColumn<QByteArray>("change");
    QTest::addColumn<QString>("message");
    const auto row = [](const char* change, const char* message) {
      QTest::newRow(change) << QByteArray(change) << QString(message);
    };
    row("3 bits", "GPTQ with 3 bits is not supported; Quire runs 4- and 8-bit GPTQ");
    row("2 bits by the shape", "GPTQ with 2 bits is not supported");
    row("qweight dtype", "qweight has dtype F32, expected I32");
    row("scales dtype", "scales has dtype BF16, expected F16");
    row("config inputs",
        "qweight has 16 rows, which hold 128 4-bit or 64 8-bit inputs, but the layer has 100");
    row("config outputs", "qweight has 64 columns, but the layer has 32 outputs");
    row("outputs not multiple of 8", "qweight has 4 columns; zero points are packed 8 to a word");
    row("qzeros columns", "qzeros has shape [4, 7]; 64 outputs need [4, 8]");
    row("scales rows", "scales has shape [2, 128]; qzeros says [4, 64]");
    row("more groups than inputs", "qzeros has 129 groups for 128 inputs");
    row("g_idx length", "g_idx has 127 entries for 128 inputs");
    row("g_idx range", "g_idx[5] is 9, but there are 4 groups");
    row("bias length", "bias has 60 elements for 64 outputs");
    row("empty", "a layer needs inputs and outputs");
  }

  void errorsNameTheLayerAndTheProblem() {
    QFETCH(QByteArray, change);
    QFETCH(QString, message);
    const std::unique_ptr<Broken> b = broken(change);
    const std::string error = quire::test::model_error_message(
        [&] { describe_gptq(kLayerKey, b->tensors, b->options, b->shape); });
    QVERIFY2(!error.empty(), "no ModelError");
    QVERIFY2(error.starts_with(kLayerKey), error.c_str());
    QVERIFY2(error.find(message.toStdString()) != std::string::npos, error.c_str());
    // Not damage: a format Quire does not run.
    if (change == "3 bits" || change == "2 bits by the shape") return;
    const bool config = change.startsWith("config");
    QVERIFY2(error.find(config ? "config.json does not describe" : "download or convert") !=
                 std::string::npos,
             error.c_str());
  }

  void theUnchangedLayerIsAccepted() {
    const std::unique_ptr<Broken> b = broken("nothing");
    QCOMPARE(describe_gptq(kLayerKey, b->tensors, b->options, b->shape).groups, 4);
  }
};

QUIRE_TEST(GptqLayoutTest)
#include "test_gptq_layout.moc"
