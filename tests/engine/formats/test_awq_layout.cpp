// AutoAWQ's GEMM layout: the interleaved nibble order, the repacking into
// GPTQ's layout, the writer, and the errors of describe_awq.

#include <QTest>
#include <cmath>
#include <memory>
#include <random>

#include "formats_test_support.h"
#include "quire/engine/formats/awq_layout.h"
#include "quire/engine/formats/awq_writer.h"
#include "quire/kernels/cpu/half.h"
#include "quire/kernels/cpu/linear.h"
#include "test_main.h"

using namespace quire::engine::formats;
using quire::kernels::DType;
using quire::test::kLayerKey;

using quire::test::bytes_of;
using quire::test::view_of;

namespace {

const NamedTensor& named(const std::vector<NamedTensor>& tensors, const std::string& suffix) {
  for (const NamedTensor& tensor : tensors)
    if (tensor.suffix == suffix) return tensor;
  throw std::out_of_range(suffix);
}

AwqTensors views_of(const std::vector<NamedTensor>& tensors) {
  return {view_of(named(tensors, "qweight")), view_of(named(tensors, "qzeros")),
          view_of(named(tensors, "scales")), std::nullopt};
}

// A layer of 8 inputs and 8 outputs in one group: q[k, c] = (k + c) % 16,
// zero point c for column c, every scale 0.5. AWQ packs a row's eight columns
// into one word, column kAwqOrder[i] = {0, 2, 4, 6, 1, 3, 5, 7}[i] at bits 4i.
struct HandBuilt {
  std::vector<std::uint32_t> qweight, qzeros;
  std::vector<std::uint16_t> scales;
  AwqTensors tensors;

  HandBuilt() {
    const int order[8] = {0, 2, 4, 6, 1, 3, 5, 7};
    for (int k = 0; k < 8; ++k) {
      std::uint32_t word = 0;
      for (int i = 0; i < 8; ++i)
        word |= std::uint32_t((k + order[i]) % 16) << (4 * i);
      qweight.push_back(word);
    }
    qzeros = {0x75316420u};  // zero c at the slot of column c
    scales.assign(8, 0x3800u);
    tensors = {{DType::I32, {8, 1}, bytes_of(qweight)},
               {DType::I32, {1, 1}, bytes_of(qzeros)},
               {DType::F16, {1, 8}, bytes_of(scales)},
               std::nullopt};
  }
};

struct Broken {
  std::vector<NamedTensor> encoded;
  AwqTensors tensors;
  AwqOptions options;
  LinearShape shape;
  std::vector<std::uint32_t> words;
  std::vector<std::uint16_t> halves;
};

// A consistent layer (64 outputs, 128 inputs in groups of 32), then one change.
std::unique_ptr<Broken> broken(const QByteArray& change) {
  auto b = std::make_unique<Broken>();
  std::mt19937 rng(2);
  b->encoded = quantize_awq(quire::test::random_matrix(rng, 64, 128), 64, 128, {32});
  AwqTensors& t = b->tensors;
  t = views_of(b->encoded);
  b->options.group_size = 32;
  if (change == "8 bits") b->options.bits = 8;
  if (change == "qweight dtype") t.qweight.dtype = DType::F32;
  if (change == "scales dtype") t.scales.dtype = DType::BF16;
  if (change == "config inputs") b->shape.in_features = 256;
  if (change == "config outputs") b->shape.out_features = 32;
  if (change == "config group size") b->options.group_size = 64;
  if (change == "inputs not multiple of 8") {
    b->words.assign(100 * 8, 0u);
    t.qweight = {DType::I32, {100, 8}, bytes_of(b->words)};
  }
  if (change == "groups not dividing") {
    b->words.assign(3 * 8, 0u);
    t.qzeros = {DType::I32, {3, 8}, bytes_of(b->words)};
  }
  if (change == "qzeros columns") {
    b->words.assign(4 * 7, 0u);
    t.qzeros = {DType::I32, {4, 7}, bytes_of(b->words)};
  }
  if (change == "scales shape") {
    b->halves.assign(4 * 60, 0u);
    t.scales = {DType::F16, {4, 60}, bytes_of(b->halves)};
  }
  if (change == "bias length") {
    b->halves.assign(60, 0x3c00);
    t.bias = TensorView{DType::F16, {60}, bytes_of(b->halves)};
  }
  return b;
}

}  // namespace

class AwqLayoutTest : public QObject {
  Q_OBJECT

 private slots:
  void interleavedNibblesReachTheirColumns() {
    const HandBuilt layer;
    const GptqLayout layout = describe_awq(kLayerKey, layer.tensors, {4, 8}, {8, 8});
    QCOMPARE(layout.groups, 1);
    QCOMPARE(layout.group_size, 8);
    QVERIFY(layout.exact_zeros);
    QVERIFY(!layout.symmetric);
    const GptqRepacked packed = repack_awq(layout, layer.tensors);
    // GPTQ's layout: column c's values run down its word, row k at bits 4k;
    // its zero point at bits 4c of the group's word.
    QCOMPARE(packed.qweight.size(), std::size_t(8));
    for (int c = 0; c < 8; ++c) {
      for (int k = 0; k < 8; ++k)
        QCOMPARE(int(packed.qweight[std::size_t(c)] >> (4 * k)) & 15, (k + c) % 16);
    }
    QCOMPARE(packed.qzeros, std::vector<std::uint32_t>{0x76543210u});
    const std::vector<float> dense =
        quire::kernels::dequantize(host_linear_weight(layout, packed, std::nullopt));
    for (int c = 0; c < 8; ++c) {
      for (int k = 0; k < 8; ++k)
        QCOMPARE(dense[std::size_t(c * 8 + k)], float((k + c) % 16 - c) * 0.5f);
    }
  }

  // quantize -> describe -> repack -> dequantize: every weight within half
  // a step of its group's FP16 scale (plus what rounding the scale to FP16
  // moves the zero point's offset, at most 15 of its steps' rounding).
  void roundTripErrorIsBoundedByTheScales_data() {
    QTest::addColumn<int>("groupSize");
    QTest::newRow("groups of 32") << 32;
    QTest::newRow("groups of 128") << 128;
    QTest::newRow("one group (-1)") << -1;
  }

  void roundTripErrorIsBoundedByTheScales() {
    QFETCH(int, groupSize);
    const std::int64_t outputs = 48;
    const std::int64_t inputs = 256;
    std::mt19937 rng(5);
    const std::vector<float> w = quire::test::random_matrix(rng, outputs, inputs);
    const std::vector<NamedTensor> encoded = quantize_awq(w, outputs, inputs, {groupSize});
    const AwqTensors tensors = views_of(encoded);
    const GptqLayout layout = describe_awq(kLayerKey, tensors, {4, groupSize}, {inputs, outputs});
    const std::int64_t size = groupSize == -1 ? inputs : groupSize;
    QCOMPARE(layout.group_size, int(size));
    const std::vector<float> dense = quire::kernels::dequantize(
        host_linear_weight(layout, repack_awq(layout, tensors), std::nullopt));
    const auto* scales =
        reinterpret_cast<const std::uint16_t*>(named(encoded, "scales").bytes.data());
    for (std::int64_t n = 0; n < outputs; ++n) {
      for (std::int64_t k = 0; k < inputs; ++k) {
        const double scale = quire::kernels::half_to_float(scales[(k / size) * outputs + n]);
        const std::size_t at = std::size_t(n * inputs + k);
        QVERIFY2(std::fabs(double(w[at]) - double(dense[at])) <= scale * (0.5 + 15 * 1e-3),
                 qPrintable(QString("input %1, output %2").arg(k).arg(n)));
      }
    }
  }

  void namedTensorsMatchAutoAwq() {
    std::mt19937 rng(3);
    const std::vector<NamedTensor> encoded =
        quantize_awq(quire::test::random_matrix(rng, 24, 64), 24, 64, {32});
    QCOMPARE(encoded.size(), std::size_t(3));
    QCOMPARE(named(encoded, "qweight").shape, (std::vector<std::int64_t>{64, 3}));
    QCOMPARE(named(encoded, "qzeros").shape, (std::vector<std::int64_t>{2, 3}));
    QCOMPARE(named(encoded, "scales").shape, (std::vector<std::int64_t>{2, 24}));
    QCOMPARE(named(encoded, "scales").dtype, DType::F16);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             quantize_awq(std::vector<float>(24 * 64), 24, 64, {48}));
  }

  void errorsNameTheLayerAndTheProblem_data() {
    QTest::addColumn<QByteArray>("change");
    QTest::addColumn<QString>("message");
    const auto row = [](const char* change, const char* message) {
      QTest::newRow(change) << QByteArray(change) << QString(message);
    };
    row("8 bits", "AWQ with 8 bits is not supported");
    row("qweight dtype", "qweight has dtype F32, expected I32");
    row("scales dtype", "scales has dtype BF16, expected F16");
    row("config inputs", "qweight has 128 rows, one per input, but the layer has 256 inputs");
    row("config outputs", "qweight has 8 columns, which hold 64 outputs, but the layer has 32");
    row("config group size",
        "qzeros has 4 groups of 32 inputs, but quantization_config's group_size is 64");
    row("inputs not multiple of 8", "qweight has 100 rows; Quire runs AWQ layers whose inputs");
    row("groups not dividing", "qzeros has 3 groups, which do not divide the 128 inputs");
    row("qzeros columns", "qzeros has shape [4, 7]; 64 outputs need [4, 8]");
    row("scales shape", "scales has shape [4, 60]; qzeros says [4, 64]");
    row("bias length", "bias has 60 elements for 64 outputs");
  }

  void errorsNameTheLayerAndTheProblem() {
    QFETCH(QByteArray, change);
    QFETCH(QString, message);
    const std::unique_ptr<Broken> b = broken(change);
    const std::string error = quire::test::model_error_message(
        [&] { describe_awq(kLayerKey, b->tensors, b->options, b->shape); });
    QVERIFY2(!error.empty(), "no ModelError");
    QVERIFY2(error.starts_with(kLayerKey), error.c_str());
    QVERIFY2(error.find(message.toStdString()) != std::string::npos, error.c_str());
  }

  void theUnchangedLayerIsAccepted() {
    const std::unique_ptr<Broken> b = broken("nothing");
    QCOMPARE(describe_awq(kLayerKey, b->tensors, b->options, b->shape).groups, 4);
  }
};

QUIRE_TEST(AwqLayoutTest)
#include "test_awq_layout.moc"
