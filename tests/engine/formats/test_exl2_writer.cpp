#include <QTest>
#include <cmath>
#include <numeric>
#include <random>
#include <set>

#include "formats_test_support.h"
#include "quire/engine/formats/exl2_layout.h"
#include "quire/engine/formats/exl2_writer.h"
#include "quire/kernels/cpu/exl2_scale.h"
#include "quire/kernels/cpu/half.h"
#include "quire/kernels/cpu/linear.h"
#include "test_main.h"

using namespace quire::engine::formats;
using quire::kernels::half_to_float;
using quire::test::kLayerKey;

namespace {

// The scale the encoding stored for group g and column n (rounded to FP16).
double stored_scale(const Exl2Encoding& encoding, std::size_t g, std::int64_t n) {
  const std::uint32_t word =
      encoding.q_scale[g * std::size_t(encoding.q_columns / 8) + std::size_t(n / 8)];
  return double(quire::kernels::exl2_scale(static_cast<int>((word >> (4 * (n % 8))) & 15u) + 1,
                                           encoding.q_scale_max[g]));
}

}  // namespace

class Exl2WriterTest : public QObject {
  Q_OBJECT

 private slots:
  // quantize -> describe -> dequantize: every weight within half a step of
  // its column's scale in its group, and the scales are not wasteful (some
  // column of each group uses the full 4-bit scale).
  void roundTripErrorIsBoundedByTheScales_data() {
    QTest::addColumn<int>("outputs");
    QTest::addColumn<int>("inputs");
    QTest::addColumn<double>("bits");
    QTest::newRow("4.0 bpw") << 64 << 512 << 4.0;
    QTest::newRow("3.0 bpw") << 96 << 256 << 3.0;
    QTest::newRow("5.5 bpw, padded") << 50 << 320 << 5.5;
    QTest::newRow("2.0 bpw") << 32 << 128 << 2.0;
    QTest::newRow("8.0 bpw") << 32 << 128 << 8.0;
  }

  void roundTripErrorIsBoundedByTheScales() {
    QFETCH(int, outputs);
    QFETCH(int, inputs);
    QFETCH(double, bits);
    std::mt19937 rng(17);
    const std::vector<float> w = quire::test::random_matrix(rng, outputs, inputs);
    const Exl2Encoding encoding =
        quantize_exl2(w, outputs, inputs, {plan_exl2_groups(inputs, bits), 1234});
    const Exl2Tensors tensors = encoding.views();
    const Exl2Layout layout = describe_exl2(kLayerKey, tensors, {inputs, outputs});
    const std::vector<float> dense =
        quire::kernels::dequantize(host_linear_weight(layout, tensors));
    for (std::size_t g = 0; g < layout.groups.size(); ++g) {
      const quire::kernels::Exl2Group& group = layout.groups[g];
      bool full_scale_used = false;
      for (std::int64_t n = 0; n < outputs; ++n) {
        const double scale = stored_scale(encoding, g, n);
        full_scale_used = full_scale_used || scale == half_to_float(encoding.q_scale_max[g]);
        for (int j = 0; j < group.rows; ++j) {
          const std::size_t at =
              std::size_t(n * inputs + layout.perm[std::size_t(group.first_row + j)]);
          const double error = std::fabs(double(w[at]) - double(dense[at]));
          QVERIFY2(error <= scale / 2 * (1 + 1e-6),
                   qPrintable(QString("group %1, column %2: error %3, scale %4")
                                  .arg(g)
                                  .arg(n)
                                  .arg(error)
                                  .arg(scale)));
        }
      }
      QVERIFY(full_scale_used);
    }
  }

  // The permutation comes from the seed alone, and the identity without one.
  void permutationIsSeeded() {
    std::mt19937 rng(2);
    const std::vector<float> w = quire::test::random_matrix(rng, 32, 256);
    const auto perm = [&](std::optional<std::uint64_t> seed) {
      return quantize_exl2(w, 32, 256, {{{4, 256}}, seed}).perm;
    };
    QCOMPARE(perm(7), perm(7));
    QVERIFY(perm(7) != perm(8));
    std::vector<std::int32_t> identity(256);
    std::iota(identity.begin(), identity.end(), 0);
    QCOMPARE(perm({}), identity);
    const std::vector<std::int32_t> shuffled = perm(7);
    QCOMPARE(std::set<std::int32_t>(shuffled.begin(), shuffled.end()).size(), std::size_t(256));
  }

  // The tensors as a safetensors file gets them: exllamav2's names, dtypes and shapes.
  void namedTensorsMatchTheConverter() {
    std::mt19937 rng(3);
    const std::vector<float> w = quire::test::random_matrix(rng, 40, 96);
    const Exl2Encoding encoding = quantize_exl2(w, 40, 96, {{{5, 32}, {4, 64}}, 1});
    const std::vector<NamedTensor> tensors = encoding.tensors();
    QCOMPARE(tensors.size(), std::size_t(5));
    const auto check = [&](std::size_t i, const char* suffix, quire::kernels::DType dtype,
                           std::vector<std::int64_t> shape) {
      QCOMPARE(tensors[i].suffix, std::string(suffix));
      QCOMPARE(tensors[i].dtype, dtype);
      QCOMPARE(tensors[i].shape, shape);
      std::int64_t elements = 1;
      for (const std::int64_t dim : shape)
        elements *= dim;
      QCOMPARE(tensors[i].bytes.size(), std::size_t(elements) * quire::kernels::dtype_size(dtype));
    };
    using quire::kernels::DType;
    check(0, "q_weight", DType::I32, {5 + 8, 64});
    check(1, "q_invperm", DType::I32, {96});
    check(2, "q_scale", DType::I32, {2, 8});
    check(3, "q_scale_max", DType::F16, {2});
    check(4, "q_groups", DType::I16, {4});
    QCOMPARE(encoding.q_groups, (std::vector<std::uint16_t>{5, 0, 4, 5}));
  }

  void rejectsPlansThatBreakTheRules() {
    const std::vector<float> w(32 * 64, 0.01f);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             quantize_exl2(w, 32, 64, {{{4, 32}, {5, 32}}, {}}));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             quantize_exl2(w, 32, 64, {{{3, 48}, {3, 16}}, {}}));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, quantize_exl2(w, 32, 64, {{{4, 32}}, {}}));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, quantize_exl2(w, 32, 64, {{{7, 64}}, {}}));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, quantize_exl2(w, 31, 64, {{{4, 64}}, {}}));
  }

  // A group of zeros and a column of zeros survive (scale 0 or the smallest).
  void zeroWeightsStayZero() {
    std::vector<float> w(32 * 64, 0.0f);
    for (int k = 32; k < 64; ++k)
      w[std::size_t(5 * 64 + k)] = 0.25f;
    const Exl2Encoding encoding = quantize_exl2(w, 32, 64, {{{4, 32}, {4, 32}}, {}});
    const Exl2Tensors tensors = encoding.views();
    const std::vector<float> dense =
        quire::kernels::dequantize(host_linear_weight(describe_exl2(kLayerKey, tensors), tensors));
    QCOMPARE(half_to_float(encoding.q_scale_max[0]), 0.0f);
    for (std::int64_t n = 0; n < 32; ++n) {
      for (std::int64_t k = 0; k < 64; ++k) {
        const std::size_t at = std::size_t(n * 64 + k);
        if (w[at] == 0.0f) {
          QCOMPARE(dense[at], 0.0f);
        } else {
          QVERIFY(std::fabs(dense[at] - w[at]) <= stored_scale(encoding, 1, n) / 2);
        }
      }
    }
  }

  void plansMixWidthsAroundTheTarget_data() {
    QTest::addColumn<int>("inputs");
    QTest::addColumn<double>("bits");
    QTest::addColumn<QList<int>>("widths");
    QTest::newRow("4.0") << 4096 << 4.0 << QList<int>{5, 4, 3};
    QTest::newRow("4.65") << 4096 << 4.65 << QList<int>{5, 4};
    QTest::newRow("6.0") << 1024 << 6.0 << QList<int>{8, 6, 5};
    QTest::newRow("2.0") << 512 << 2.0 << QList<int>{2};
    QTest::newRow("8.0") << 512 << 8.0 << QList<int>{8};
    QTest::newRow("3.5, small layer") << 128 << 3.5 << QList<int>{4, 3};
  }

  void plansMixWidthsAroundTheTarget() {
    QFETCH(int, inputs);
    QFETCH(double, bits);
    QFETCH(QList<int>, widths);
    const std::vector<Exl2GroupSpec> plan = plan_exl2_groups(inputs, bits);
    int rows = 0;
    QList<int> seen;
    for (std::size_t g = 0; g < plan.size(); ++g) {
      QVERIFY(g == 0 || plan[g].bits <= plan[g - 1].bits);
      QCOMPARE(plan[g].rows * plan[g].bits % 32, 0);
      if (!seen.contains(plan[g].bits)) seen.append(plan[g].bits);
      rows += plan[g].rows;
    }
    QCOMPARE(rows, inputs);
    QCOMPARE(seen, widths);
    QVERIFY2(std::fabs(plan_bits_per_weight(plan) - bits) <= 0.1,
             qPrintable(QString::number(plan_bits_per_weight(plan))));
  }

  void planGroupSizeAndRemainder() {
    const std::vector<Exl2GroupSpec> plan = plan_exl2_groups(320, 4.0, 128);
    QCOMPARE(plan.size(), std::size_t(3));
    QCOMPARE(plan[0].rows, 128);
    QCOMPARE(plan[2].rows, 64);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, plan_exl2_groups(100, 4.0));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, plan_exl2_groups(128, 9.0));
  }
};

QUIRE_TEST(Exl2WriterTest)
#include "test_exl2_writer.moc"
