#include <QTest>
#include <cmath>
#include <random>

#include "formats_test_support.h"
#include "quire/engine/formats/gptq_layout.h"
#include "quire/engine/formats/gptq_writer.h"
#include "quire/kernels/cpu/half.h"
#include "quire/kernels/cpu/linear.h"
#include "test_main.h"

using namespace quire::engine::formats;
using quire::kernels::half_to_float;
using quire::test::kLayerKey;

class GptqWriterTest : public QObject {
  Q_OBJECT

 private slots:
  // quantize -> describe -> dequantize: every weight within half a step of
  // its group's scale for its column.
  void roundTripErrorIsBoundedByTheScales_data() {
    QTest::addColumn<int>("groupSize");
    QTest::addColumn<bool>("actOrder");
    QTest::addColumn<bool>("exactZeros");
    QTest::addColumn<int>("bits");
    QTest::newRow("v1, groups of 32") << 32 << false << false << 4;
    QTest::newRow("v2, groups of 128") << 128 << false << true << 4;
    QTest::newRow("v1, act-order") << 64 << true << false << 4;
    QTest::newRow("v2, act-order") << 32 << true << true << 4;
    QTest::newRow("8 bits, v1, groups of 32") << 32 << false << false << 8;
    QTest::newRow("8 bits, v2, act-order") << 64 << true << true << 8;
  }

  void roundTripErrorIsBoundedByTheScales() {
    QFETCH(int, groupSize);
    QFETCH(bool, actOrder);
    QFETCH(bool, exactZeros);
    QFETCH(int, bits);
    const std::int64_t outputs = 48;
    const std::int64_t inputs = 320;
    std::mt19937 rng(23);
    const std::vector<float> w = quire::test::random_matrix(rng, outputs, inputs);
    GptqQuantizeOptions options;
    options.group_size = groupSize;
    if (actOrder) options.act_order_seed = 77;
    options.exact_zeros = exactZeros;
    options.bits = bits;
    const GptqEncoding encoding = quantize_gptq(w, outputs, inputs, options);
    const GptqTensors tensors = encoding.views();
    const GptqLayout layout = describe_gptq(kLayerKey, tensors, {4, exactZeros}, {inputs, outputs});
    QCOMPARE(layout.bits, bits);
    QCOMPARE(layout.group_size, groupSize);
    QCOMPARE(layout.g_idx.empty(), !actOrder);
    const std::vector<float> dense =
        quire::kernels::dequantize(host_linear_weight(layout, tensors));
    for (std::int64_t n = 0; n < outputs; ++n) {
      for (std::int64_t k = 0; k < inputs; ++k) {
        const std::int64_t g = encoding.g_idx[std::size_t(k)];
        const double scale = half_to_float(encoding.scales[std::size_t(g * outputs + n)]);
        const std::size_t at = std::size_t(n * inputs + k);
        QVERIFY2(std::fabs(double(w[at]) - double(dense[at])) <= scale / 2 * (1 + 1e-6),
                 qPrintable(QString("input %1, output %2").arg(k).arg(n)));
      }
    }
  }

  // v1 stores z - 1, so a zero point of 0 cannot be written: a group of
  // positive weights gets z = 1 and a scale that still covers its maximum.
  void version1NeverStoresANegativeZero() {
    std::mt19937 rng(8);
    std::uniform_real_distribution<float> positive(0.01f, 1.0f);
    std::vector<float> w(16 * 64);
    for (float& value : w)
      value = positive(rng);
    const GptqEncoding encoding = quantize_gptq(w, 16, 64, {32, {}, false, false});
    for (const std::uint32_t word : encoding.qzeros) {
      for (int i = 0; i < 8; ++i)
        QCOMPARE((word >> (4 * i)) & 15u, 0u);  // z = 1
    }
    const GptqTensors tensors = encoding.views();
    const std::vector<float> dense = quire::kernels::dequantize(
        host_linear_weight(describe_gptq(kLayerKey, tensors, {}), tensors));
    for (std::size_t i = 0; i < w.size(); ++i) {
      const std::size_t n = i / 64;
      const std::size_t g = (i % 64) / 32;
      QVERIFY(std::fabs(dense[i] - w[i]) <= half_to_float(encoding.scales[g * 16 + n]) / 2);
    }
  }

  void namedTensorsMatchGptqTools() {
    std::mt19937 rng(3);
    const std::vector<float> w = quire::test::random_matrix(rng, 24, 64);
    GptqEncoding encoding = quantize_gptq(w, 24, 64, {32, 1, false, true});
    std::vector<NamedTensor> tensors = encoding.tensors();
    QCOMPARE(tensors.size(), std::size_t(4));
    QCOMPARE(tensors[0].suffix, std::string("qweight"));
    QCOMPARE(tensors[0].shape, (std::vector<std::int64_t>{8, 24}));
    QCOMPARE(tensors[1].suffix, std::string("qzeros"));
    QCOMPARE(tensors[1].shape, (std::vector<std::int64_t>{2, 3}));
    QCOMPARE(tensors[2].suffix, std::string("scales"));
    QCOMPARE(tensors[2].dtype, quire::kernels::DType::F16);
    QCOMPARE(tensors[3].suffix, std::string("g_idx"));
    QCOMPARE(tensors[3].bytes.size(), std::size_t(64 * 4));
    encoding = quantize_gptq(w, 24, 64, {32, {}, false, false});
    QCOMPARE(encoding.tensors().size(), std::size_t(3));
  }

  void rejectsBadArguments() {
    const std::vector<float> w(16 * 64, 0.5f);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             quantize_gptq(w, 16, 64, {48, {}, false, true}));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             quantize_gptq(w, 16, 128, {32, {}, false, true}));
    const std::vector<float> twelve(12 * 64, 0.5f);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             quantize_gptq(twelve, 12, 64, {32, {}, false, true}));
    std::vector<float> nan = w;
    nan[3] = std::nanf("");
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             quantize_gptq(nan, 16, 64, {32, {}, false, true}));
  }
};

QUIRE_TEST(GptqWriterTest)
#include "test_gptq_writer.moc"
