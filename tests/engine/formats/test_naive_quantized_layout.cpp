// compressed-tensors' naive-quantized int8 weights: scales per tensor, row
// or group, zero points, the repacking into GPTQ's 8-bit layout, the writer,
// and describe_naive_quantized's errors.

#include <QTest>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>

#include "formats_test_support.h"
#include "quire/engine/formats/compressed_tensors_writer.h"
#include "quire/engine/formats/naive_quantized_layout.h"
#include "quire/kernels/cpu/half.h"
#include "quire/kernels/cpu/linear.h"
#include "test_main.h"

using namespace quire::engine::formats;
using quire::kernels::DType;
using quire::test::kLayerKey;
using Strategy = NaiveQuantizedScheme::Strategy;

using quire::test::bytes_of;
using quire::test::find_tensor;
using quire::test::view_of;

namespace {

NaiveQuantizedTensors views_of(const std::vector<NamedTensor>& tensors) {
  NaiveQuantizedTensors t;
  t.weight = view_of(*find_tensor(tensors, "weight"));
  t.weight_scale = view_of(*find_tensor(tensors, "weight_scale"));
  if (const NamedTensor* zero = find_tensor(tensors, "weight_zero_point"))
    t.weight_zero_point = view_of(*zero);
  if (const NamedTensor* g_idx = find_tensor(tensors, "weight_g_idx"))
    t.weight_g_idx = view_of(*g_idx);
  return t;
}

std::vector<float> dequantized(const GptqLayout& layout, const NaiveQuantizedTensors& tensors) {
  return quire::kernels::dequantize(
      host_linear_weight(layout, repack_naive_quantized(layout, tensors), std::nullopt));
}

NaiveQuantizedScheme scheme_of(Strategy strategy, bool symmetric, int group_size = 0) {
  NaiveQuantizedScheme scheme;
  scheme.strategy = strategy;
  scheme.symmetric = symmetric;
  scheme.group_size = group_size;
  return scheme;
}

// 8 outputs of 16 inputs: q[n, k] = 16n - 8k + 3 (-117..115).
std::vector<std::int8_t> hand_values() {
  std::vector<std::int8_t> values;
  for (int n = 0; n < 8; ++n) {
    for (int k = 0; k < 16; ++k)
      values.push_back(std::int8_t(16 * n - 8 * k + 3));
  }
  return values;
}

struct Broken {
  std::vector<NamedTensor> encoded;
  NaiveQuantizedTensors tensors;
  NaiveQuantizedScheme scheme;
  LinearShape shape;
  std::vector<std::int8_t> bytes;
  std::vector<std::int32_t> indices;
};

// A consistent layer (32 outputs, 64 inputs, per-row scales with zero
// points), then one change.
std::unique_ptr<Broken> broken(const QByteArray& change) {
  auto b = std::make_unique<Broken>();
  std::mt19937 rng(13);
  IntQuantizeOptions options;
  options.symmetric = false;
  options.group_size = 0;
  b->encoded = quantize_naive_int8(quire::test::random_matrix(rng, 32, 64), 32, 64, options);
  b->scheme = scheme_of(Strategy::channel, false);
  NaiveQuantizedTensors& t = b->tensors;
  t = views_of(b->encoded);
  if (change == "weight dtype") t.weight.dtype = DType::U8;
  if (change == "config shape") b->shape = {128, 32};
  if (change == "per-tensor scheme") b->scheme.strategy = Strategy::tensor;
  if (change == "group scheme") b->scheme = scheme_of(Strategy::group, false, 32);
  if (change == "group size not dividing") b->scheme = scheme_of(Strategy::group, false, 48);
  if (change == "values beyond 4 bits") b->scheme.bits = 4;
  if (change == "zero points where symmetric") b->scheme.symmetric = true;
  if (change == "missing zero points") t.weight_zero_point.reset();
  if (change == "zero point shape") {
    b->bytes.assign(32, 0);
    t.weight_zero_point = TensorView{DType::I8, {32}, bytes_of(b->bytes)};
  }
  if (change == "g_idx without groups") {
    b->indices.assign(64, 0);
    t.weight_g_idx = TensorView{DType::I32, {64}, bytes_of(b->indices)};
  }
  return b;
}

}  // namespace

class NaiveQuantizedLayoutTest : public QObject {
  Q_OBJECT

 private slots:
  // Scales of each strategy, and the repacking: q + 128 four to a word.
  void everyStrategyGivesItsScales_data() {
    QTest::addColumn<int>("strategy");
    QTest::newRow("tensor") << int(Strategy::tensor);
    QTest::newRow("channel") << int(Strategy::channel);
    QTest::newRow("group of 8") << int(Strategy::group);
  }

  void everyStrategyGivesItsScales() {
    QFETCH(int, strategy);
    const auto kind = Strategy(strategy);
    const std::vector<std::int8_t> values = hand_values();
    // Scales exact in F16: tensor 0.5; row n (n + 1) / 8; group g of row n (n + 1 + 8g) / 16.
    std::vector<std::uint16_t> scales;
    std::vector<std::int64_t> shape;
    if (kind == Strategy::tensor) {
      scales = {quire::kernels::float_to_half(0.5f)};
      shape = {1};
    } else if (kind == Strategy::channel) {
      for (int n = 0; n < 8; ++n)
        scales.push_back(quire::kernels::float_to_half(float(n + 1) / 8.0f));
      shape = {8, 1};
    } else {
      for (int n = 0; n < 8; ++n) {
        for (int g = 0; g < 2; ++g)
          scales.push_back(quire::kernels::float_to_half(float(n + 1 + 8 * g) / 16.0f));
      }
      shape = {8, 2};
    }
    NaiveQuantizedTensors tensors;
    tensors.weight = {DType::I8, {8, 16}, bytes_of(values)};
    tensors.weight_scale = {DType::F16, shape, bytes_of(scales)};
    const GptqLayout layout =
        describe_naive_quantized(kLayerKey, tensors, scheme_of(kind, true, 8), {16, 8});
    QCOMPARE(layout.bits, 8);
    QVERIFY(layout.symmetric);
    QCOMPARE(layout.groups, kind == Strategy::group ? 2 : 1);
    const GptqRepacked packed = repack_naive_quantized(layout, tensors);
    // Row 0, column 0: inputs 0..3 hold 3, -5, -13, -21, each plus 128.
    QCOMPARE(packed.qweight[0], 0x6b737b83u);
    // A tensor's one scale is repeated for every column.
    QCOMPARE(packed.scales.size(), std::size_t(layout.groups * 8 * 2));
    const std::vector<float> dense = dequantized(layout, tensors);
    for (int n = 0; n < 8; ++n) {
      for (int k = 0; k < 16; ++k) {
        const float scale = kind == Strategy::tensor    ? 0.5f
                            : kind == Strategy::channel ? float(n + 1) / 8.0f
                                                        : float(n + 1 + 8 * (k / 8)) / 16.0f;
        QCOMPARE(dense[std::size_t(n * 16 + k)], float(16 * n - 8 * k + 3) * scale);
      }
    }
  }

  // Zero points per row: w = (q - z) * s, z = n - 3 here, packed as z + 128.
  void zeroPointsAreSubtracted() {
    const std::vector<std::int8_t> values = hand_values();
    std::vector<std::uint16_t> scales(8, quire::kernels::float_to_half(0.25f));
    std::vector<std::int8_t> zeros;
    for (int n = 0; n < 8; ++n)
      zeros.push_back(std::int8_t(n - 3));
    NaiveQuantizedTensors tensors;
    tensors.weight = {DType::I8, {8, 16}, bytes_of(values)};
    tensors.weight_scale = {DType::F16, {8, 1}, bytes_of(scales)};
    tensors.weight_zero_point = TensorView{DType::I8, {8, 1}, bytes_of(zeros)};
    const GptqLayout layout =
        describe_naive_quantized(kLayerKey, tensors, scheme_of(Strategy::channel, false));
    QVERIFY(!layout.symmetric);
    QCOMPARE(repack_naive_quantized(layout, tensors).qzeros[0], 0x807f7e7du);  // 125..128
    const std::vector<float> dense = dequantized(layout, tensors);
    for (int n = 0; n < 8; ++n) {
      for (int k = 0; k < 16; ++k)
        QCOMPARE(dense[std::size_t(n * 16 + k)], float(16 * n - 8 * k + 3 - (n - 3)) * 0.25f);
    }
    // Older compressed-tensors wrote the zeros of symmetric schemes: all 0, accepted.
    const std::vector<std::int8_t> none(8, 0);
    tensors.weight_zero_point = TensorView{DType::I8, {8, 1}, bytes_of(none)};
    QVERIFY(
        describe_naive_quantized(kLayerKey, tensors, scheme_of(Strategy::channel, true)).symmetric);
  }

  // quantize -> describe -> repack -> dequantize within half a step, plus
  // what rounding the scale to BF16 (at most 2^-8 of it) stretches the 255
  // steps of the range by.
  void roundTripErrorIsBoundedByTheScales_data() {
    QTest::addColumn<bool>("symmetric");
    QTest::addColumn<int>("groupSize");
    QTest::newRow("per channel") << true << 0;
    QTest::newRow("per channel, zero points") << false << 0;
    QTest::newRow("groups of 32") << true << 32;
  }

  void roundTripErrorIsBoundedByTheScales() {
    QFETCH(bool, symmetric);
    QFETCH(int, groupSize);
    const std::int64_t outputs = 24;
    const std::int64_t inputs = 128;
    std::mt19937 rng(17);
    const std::vector<float> w = quire::test::random_matrix(rng, outputs, inputs);
    IntQuantizeOptions options;
    options.symmetric = symmetric;
    options.group_size = groupSize;
    const std::vector<NamedTensor> encoded = quantize_naive_int8(w, outputs, inputs, options);
    QCOMPARE(find_tensor(encoded, "weight")->dtype, DType::I8);
    const NaiveQuantizedTensors tensors = views_of(encoded);
    const GptqLayout layout = describe_naive_quantized(
        kLayerKey, tensors,
        scheme_of(groupSize == 0 ? Strategy::channel : Strategy::group, symmetric, groupSize));
    const std::vector<float> dense = dequantized(layout, tensors);
    const std::int64_t groups = groupSize == 0 ? 1 : inputs / groupSize;
    const NamedTensor& scales = *find_tensor(encoded, "weight_scale");
    for (std::int64_t n = 0; n < outputs; ++n) {
      for (std::int64_t k = 0; k < inputs; ++k) {
        std::uint16_t bits = 0;
        std::memcpy(&bits, scales.bytes.data() + 2 * (n * groups + k * groups / inputs), 2);
        const double scale = quire::kernels::bf16_to_float(bits);
        const std::size_t at = std::size_t(n * inputs + k);
        QVERIFY2(std::fabs(double(w[at]) - double(dense[at])) <= scale * (0.5 + 255.0 / 256.0),
                 qPrintable(QString("input %1, output %2").arg(k).arg(n)));
      }
    }
  }

  void errorsNameTheTensorAndTheProblem_data() {
    QTest::addColumn<QByteArray>("change");
    QTest::addColumn<QString>("message");
    const auto row = [](const char* change, const char* message) {
      QTest::newRow(change) << QByteArray(change) << QString(message);
    };
    row("weight dtype", "weight has dtype U8, expected I8");
    row("config shape", "weight has shape [32, 64], but the layer is [32, 128]");
    row("per-tensor scheme", "weight_scale has shape [32, 1]; the scheme takes one scale ([1])");
    row("group scheme",
        "weight_scale has shape [32, 1]; the scheme takes one scale per row and "
        "group, [32, 2]");
    row("group size not dividing", "the scheme's group_size 48 does not divide the layer's 64");
    row("values beyond 4 bits", "outside the 4-bit range -8..7");
    row("zero points where symmetric", "but the scheme is symmetric (every zero point is 0)");
    row("missing zero points", "weight_zero_point is missing, but the scheme is asymmetric");
    row("zero point shape", "weight_zero_point has shape [32]; it has one zero point per scale");
    row("g_idx without groups", "weight_g_idx is present, but the scheme has no groups");
  }

  void errorsNameTheTensorAndTheProblem() {
    QFETCH(QByteArray, change);
    QFETCH(QString, message);
    const std::unique_ptr<Broken> b = broken(change);
    const std::string error = quire::test::model_error_message(
        [&] { describe_naive_quantized(kLayerKey, b->tensors, b->scheme, b->shape); });
    QVERIFY2(!error.empty(), "no ModelError");
    QVERIFY2(error.starts_with(kLayerKey), error.c_str());
    QVERIFY2(error.find(message.toStdString()) != std::string::npos, error.c_str());
  }

  void theUnchangedLayerIsAccepted() {
    const std::unique_ptr<Broken> b = broken("nothing");
    QCOMPARE(describe_naive_quantized(kLayerKey, b->tensors, b->scheme, b->shape).groups, 1);
  }
};

QUIRE_TEST(NaiveQuantizedLayoutTest)
#include "test_naive_quantized_layout.moc"
