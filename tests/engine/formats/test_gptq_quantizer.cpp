// GPTQ for compressed-tensors' integers: its layers are pack-quantized
// layers the reader accepts, whose weights are exactly the integers and
// scales chosen; with calibration inputs its output error is below round
// to nearest's (and is what it reports); without correlation between inputs
// it is round to nearest; actorder groups inputs by decreasing power;
// inputs calibration never saw get weight 0; bad input is refused.

#include <QTest>
#include <algorithm>
#include <random>
#include <stdexcept>
#include <vector>

#include "formats_test_support.h"
#include "quire/engine/formats/compressed_tensors_writer.h"
#include "quire/engine/formats/gptq_quantizer.h"
#include "quire/engine/formats/pack_quantized_layout.h"
#include "quire/kernels/cpu/linear.h"
#include "test_main.h"

using namespace quire::engine::formats;
using quire::test::kLayerKey;

using quire::test::bytes_of;
using quire::test::find_tensor;
using quire::test::view_of;

namespace {

constexpr std::int64_t kOut = 24;
constexpr std::int64_t kIn = 64;

// X^T X of 300 inputs whose channels differ in size and share a common part.
std::vector<double> correlated_hessian(std::int64_t inputs) {
  std::mt19937 rng(5);
  std::normal_distribution<double> normal;
  std::vector<double> hessian(static_cast<std::size_t>(inputs * inputs), 0.0);
  std::vector<double> x(static_cast<std::size_t>(inputs));
  for (int r = 0; r < 300; ++r) {
    const double common = normal(rng);
    for (std::int64_t k = 0; k < inputs; ++k)
      x[std::size_t(k)] = normal(rng) * double(1 + k % 5) + 4.0 * common;
    for (std::int64_t i = 0; i < inputs; ++i) {
      for (std::int64_t j = 0; j < inputs; ++j)
        hessian[std::size_t(i * inputs + j)] += x[std::size_t(i)] * x[std::size_t(j)];
    }
  }
  return hessian;
}

// The layer as the model reader sees it, dequantized by the CPU kernels.
std::vector<float> read_back(const std::vector<NamedTensor>& tensors, const IntQuantizeOptions& o) {
  const auto view = [&](const char* suffix) {
    const NamedTensor* tensor = find_tensor(tensors, suffix);
    return TensorView{tensor->dtype, tensor->shape, tensor->bytes};
  };
  PackQuantizedTensors t;
  t.weight_packed = view("weight_packed");
  t.weight_scale = view("weight_scale");
  t.weight_shape = view("weight_shape");
  if (find_tensor(tensors, "weight_zero_point")) t.weight_zero_point = view("weight_zero_point");
  if (find_tensor(tensors, "weight_g_idx")) t.weight_g_idx = view("weight_g_idx");
  PackQuantizedScheme scheme;
  scheme.bits = o.bits;
  scheme.symmetric = o.symmetric;
  scheme.per_channel = o.group_size == 0;
  scheme.group_size = o.group_size;
  const GptqLayout layout = describe_pack_quantized(kLayerKey, t, scheme);
  return quire::kernels::dequantize(
      host_linear_weight(layout, repack_pack_quantized(layout, t), std::nullopt));
}

// (values - zero) * scale with each input's group, computed here.
std::vector<double> weights_of(const IntQuantized& q, std::int64_t group_size) {
  std::vector<double> w(q.values.size());
  for (std::int64_t n = 0; n < q.out_features; ++n) {
    for (std::int64_t k = 0; k < q.in_features; ++k) {
      const std::int64_t g = q.g_idx.empty() ? k / group_size : q.g_idx[std::size_t(k)];
      const std::size_t at = std::size_t(n * q.groups + g);
      w[std::size_t(n * q.in_features + k)] =
          double(q.values[std::size_t(n * q.in_features + k)] - q.zeros[at]) * double(q.scales[at]);
    }
  }
  return w;
}

// tr(E H E^T) / tr(W H W^T), E = W - W^.
double output_error(const std::vector<float>& weight, const std::vector<double>& rebuilt,
                    const std::vector<double>& hessian, std::int64_t inputs) {
  double error = 0.0, total = 0.0;
  for (std::size_t row = 0; row < weight.size() / std::size_t(inputs); ++row) {
    const std::size_t base = row * std::size_t(inputs);
    for (std::int64_t i = 0; i < inputs; ++i) {
      for (std::int64_t j = 0; j < inputs; ++j) {
        const double h = hessian[std::size_t(i * inputs + j)];
        const std::size_t a = base + std::size_t(i), b = base + std::size_t(j);
        error += (weight[a] - rebuilt[a]) * h * (weight[b] - rebuilt[b]);
        total += double(weight[a]) * h * double(weight[b]);
      }
    }
  }
  return error / total;
}

}  // namespace

class GptqQuantizerTest : public QObject {
  Q_OBJECT

 private slots:
  void layersReadBackAsTheChosenIntegers_data() {
    QTest::addColumn<int>("bits");
    QTest::addColumn<bool>("symmetric");
    QTest::addColumn<int>("groupSize");
    QTest::addColumn<bool>("actorder");
    QTest::newRow("W4A16 g32") << 4 << true << 32 << false;
    QTest::newRow("W4A16_ASYM g16") << 4 << false << 16 << false;
    QTest::newRow("W4A16 channel") << 4 << true << 0 << false;
    QTest::newRow("W8A16 g32 actorder") << 8 << true << 32 << true;
    QTest::newRow("W4A16_ASYM g16 actorder") << 4 << false << 16 << true;
  }
  void layersReadBackAsTheChosenIntegers() {
    QFETCH(int, bits);
    QFETCH(bool, symmetric);
    QFETCH(int, groupSize);
    QFETCH(bool, actorder);
    std::mt19937 rng(3);
    const std::vector<float> weight = quire::test::random_matrix(rng, kOut, kIn);
    const std::vector<double> hessian = correlated_hessian(kIn);
    IntGptqOptions options;
    options.format.bits = bits;
    options.format.symmetric = symmetric;
    options.format.group_size = groupSize;
    options.format.scale_dtype = quire::kernels::DType::F16;
    options.hessian = hessian;
    options.actorder = actorder;
    const IntQuantized q = quantize_ints_gptq(weight, kOut, kIn, options);
    QCOMPARE(q.g_idx.empty(), !actorder);
    const std::vector<double> expected = weights_of(q, groupSize == 0 ? kIn : groupSize);
    const std::vector<float> read =
        read_back(pack_quantized_tensors(q, options.format), options.format);
    QCOMPARE(read.size(), expected.size());
    for (std::size_t i = 0; i < read.size(); ++i)
      QCOMPARE(double(read[i]), double(float(expected[i])));
  }

  void calibrationLowersTheOutputError_data() {
    QTest::addColumn<int>("bits");
    QTest::addColumn<bool>("actorder");
    QTest::newRow("4 bits") << 4 << false;
    QTest::newRow("4 bits actorder") << 4 << true;
    QTest::newRow("8 bits") << 8 << false;
  }
  void calibrationLowersTheOutputError() {
    QFETCH(int, bits);
    QFETCH(bool, actorder);
    std::mt19937 rng(4);
    const std::vector<float> weight = quire::test::random_matrix(rng, kOut, kIn);
    const std::vector<double> hessian = correlated_hessian(kIn);
    IntGptqOptions options;
    options.format.bits = bits;
    options.format.group_size = 32;
    options.hessian = hessian;
    options.actorder = actorder;
    IntGptqReport report;
    const IntQuantized gptq = quantize_ints_gptq(weight, kOut, kIn, options, &report);
    const IntQuantized rounded = quantize_ints(weight, kOut, kIn, options.format);
    const double gptq_error = output_error(weight, weights_of(gptq, 32), hessian, kIn);
    const double rounded_error = output_error(weight, weights_of(rounded, 32), hessian, kIn);
    QVERIFY2(
        gptq_error < 0.7 * rounded_error,
        qPrintable(QString("GPTQ %1, round to nearest %2").arg(gptq_error).arg(rounded_error)));
    QVERIFY(std::abs(report.gptq_error - gptq_error) <= 1e-9 * rounded_error + 1e-15);
    // The report's round to nearest takes the same groups: with actorder, not these.
    if (!actorder)
      QVERIFY(std::abs(report.rounded_error - rounded_error) <= 1e-9 * rounded_error + 1e-15);
  }

  // With H a multiple of the identity, the factor of H^-1 is diagonal: no
  // error reaches another input, and each weight rounds to nearest.
  void uncorrelatedInputsRoundToNearest() {
    std::mt19937 rng(6);
    const std::vector<float> weight = quire::test::random_matrix(rng, kOut, kIn);
    std::vector<double> hessian(std::size_t(kIn * kIn), 0.0);
    for (std::int64_t i = 0; i < kIn; ++i)
      hessian[std::size_t(i * kIn + i)] = 3.0;
    IntGptqOptions options;
    options.format.group_size = 16;
    options.format.symmetric = false;
    options.hessian = hessian;
    const IntQuantized gptq = quantize_ints_gptq(weight, kOut, kIn, options);
    const IntQuantized rounded = quantize_ints(weight, kOut, kIn, options.format);
    QCOMPARE(gptq.values, rounded.values);
    QCOMPARE(gptq.scales, rounded.scales);
    QCOMPARE(gptq.zeros, rounded.zeros);
  }

  // actorder: inputs by decreasing H[k, k], in groups of group_size.
  void actorderGroupsInputsByPower() {
    std::mt19937 rng(7);
    const std::vector<float> weight = quire::test::random_matrix(rng, kOut, kIn);
    std::vector<double> hessian(std::size_t(kIn * kIn), 0.0);
    // Power 1 + (k * 37) % 64: a permutation of 1..64.
    for (std::int64_t k = 0; k < kIn; ++k)
      hessian[std::size_t(k * kIn + k)] = double(1 + (k * 37) % kIn);
    IntGptqOptions options;
    options.format.group_size = 16;
    options.hessian = hessian;
    options.actorder = true;
    const IntQuantized q = quantize_ints_gptq(weight, kOut, kIn, options);
    for (std::int64_t k = 0; k < kIn; ++k) {
      const std::int64_t rank = kIn - (1 + (k * 37) % kIn);  // 0 for the most power
      QCOMPARE(q.g_idx[std::size_t(k)], std::int32_t(rank / 16));
    }
  }

  // An input calibration never saw (H[k, k] = 0) is coded as 0.
  void unseenInputsGetWeightZero() {
    std::mt19937 rng(8);
    const std::vector<float> weight = quire::test::random_matrix(rng, kOut, kIn);
    std::vector<double> hessian = correlated_hessian(kIn);
    for (std::int64_t i = 0; i < kIn; ++i) {
      hessian[std::size_t(5 * kIn + i)] = 0.0;
      hessian[std::size_t(i * kIn + 5)] = 0.0;
    }
    IntGptqOptions options;
    options.format.group_size = 32;
    options.hessian = hessian;
    const std::vector<double> w = weights_of(quantize_ints_gptq(weight, kOut, kIn, options), 32);
    for (std::int64_t n = 0; n < kOut; ++n)
      QCOMPARE(w[std::size_t(n * kIn + 5)], 0.0);
  }

  void rejectsBadInput() {
    std::mt19937 rng(9);
    const std::vector<float> weight = quire::test::random_matrix(rng, kOut, kIn);
    const std::vector<double> small(std::size_t(kIn * kIn - 1), 1.0);
    IntGptqOptions options;
    options.hessian = small;
    options.format.group_size = 32;
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, quantize_ints_gptq(weight, kOut, kIn, options));
    std::vector<double> negative(std::size_t(kIn * kIn), 0.0);
    for (std::int64_t i = 0; i < kIn; ++i)
      negative[std::size_t(i * kIn + i)] = -1.0;
    options.hessian = negative;
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, quantize_ints_gptq(weight, kOut, kIn, options));
    const std::vector<double> hessian = correlated_hessian(kIn);
    options.hessian = hessian;
    options.format.group_size = 48;  // does not divide 64
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, quantize_ints_gptq(weight, kOut, kIn, options));
  }
};

QUIRE_TEST(GptqQuantizerTest)
#include "test_gptq_quantizer.moc"
