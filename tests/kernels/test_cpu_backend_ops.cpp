// The CPU backend's devices and row-wise ops against plain double-precision
// references on random inputs.

#include <QTest>
#include <cmath>
#include <random>
#include <vector>

#include "quire/kernels/cpu/cpu_backend.h"
#include "quire/kernels/cpu/half.h"
#include "test_main.h"

using namespace quire::kernels;

namespace {

std::vector<float> random_values(std::size_t count, std::uint32_t seed, float spread = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, spread);
  std::vector<float> values(count);
  for (float& v : values)
    v = normal(rng);
  return values;
}

std::vector<std::uint16_t> to_half(const std::vector<float>& values) {
  std::vector<std::uint16_t> result(values.size());
  for (std::size_t i = 0; i < values.size(); ++i)
    result[i] = float_to_half(values[i]);
  return result;
}

}  // namespace

class CpuBackendOpsTest : public QObject {
  Q_OBJECT

 private slots:
  void parsesDeviceLists() {
    const auto two = CpuBackend::parse_devices("cpu:2x512MiB");
    QCOMPARE(two.size(), std::size_t(2));
    QCOMPARE(two[1].name, std::string("cpu1"));
    QCOMPARE(two[1].budget_bytes, std::int64_t(512) << 20);
    const auto mixed = CpuBackend::parse_devices("cpu:1GiB,64K");
    QCOMPARE(mixed[0].budget_bytes, std::int64_t(1) << 30);
    QCOMPARE(mixed[1].budget_bytes, std::int64_t(64) << 10);
    QCOMPARE(CpuBackend::parse_devices("cpu").size(), std::size_t(1));
    for (const char* bad : {"gpu:1", "cpu:", "cpu:0x1G", "cpu:12parsecs", "cpu:-5M", "cpu:2x"}) {
      QVERIFY_THROWS_EXCEPTION(std::invalid_argument, CpuBackend::parse_devices(bad));
    }
  }

  void budgetsAreEnforcedAndReported() {
    CpuBackend backend(CpuBackend::parse_devices("cpu:2x1MiB"));
    DeviceBuffer a = backend.allocate(1, 700 << 10, "weights");
    QCOMPARE(backend.devices()[1].free_bytes, std::int64_t(324) << 10);
    QCOMPARE(backend.devices()[0].free_bytes, std::int64_t(1) << 20);
    try {
      backend.allocate(1, 512 << 10, "cache");
      QFAIL("allocation beyond the budget succeeded");
    } catch (const DeviceOutOfMemory& error) {
      QCOMPARE(error.device(), 1);
      QCOMPARE(std::string(error.what()),
               std::string(
                   "device 1: needs 188 KiB more for the cache (512 KiB requested, 324 KiB free)"));
    }
    a.reset();
    QCOMPARE(backend.devices()[1].free_bytes, std::int64_t(1) << 20);
    QVERIFY_THROWS_EXCEPTION(std::out_of_range, backend.allocate(2, 16, "weights"));
  }

  void embeddingWidensRows() {
    CpuBackend backend;
    const std::vector<float> table = random_values(10 * 6, 1);
    const std::vector<std::uint16_t> half = to_half(table);
    const std::int32_t tokens[] = {3, 0, 9, 3};
    std::vector<float> out(4 * 6);
    backend.embedding(0, DenseWeight{half.data(), DType::F16}, 10, 6, tokens, 4, out.data());
    for (int t = 0; t < 4; ++t) {
      for (int i = 0; i < 6; ++i) {
        QCOMPARE(out[std::size_t(t * 6 + i)], half_to_float(half[std::size_t(tokens[t] * 6 + i)]));
      }
    }
    const std::int32_t bad[] = {10};
    QVERIFY_THROWS_EXCEPTION(
        std::invalid_argument,
        backend.embedding(0, DenseWeight{half.data(), DType::F16}, 10, 6, bad, 1, out.data()));
  }

  void rmsNormMatchesTheDefinition() {
    CpuBackend backend;
    const int rows = 5, cols = 96;
    const std::vector<float> x = random_values(rows * cols, 2, 3.0f);
    const std::vector<float> gamma = random_values(cols, 3);
    std::vector<float> out(x.size());
    backend.rms_norm(0, x.data(), DenseWeight{gamma.data(), DType::F32}, 1e-5f, rows, cols,
                     out.data());
    for (int r = 0; r < rows; ++r) {
      double sum = 0;
      for (int c = 0; c < cols; ++c)
        sum += double(x[std::size_t(r * cols + c)]) * x[std::size_t(r * cols + c)];
      const double inverse = 1.0 / std::sqrt(sum / cols + 1e-5);
      for (int c = 0; c < cols; ++c) {
        const double expected = gamma[std::size_t(c)] * x[std::size_t(r * cols + c)] * inverse;
        QVERIFY(std::fabs(out[std::size_t(r * cols + c)] - expected) <
                1e-5 * (1 + std::fabs(expected)));
      }
    }
  }

  void ropeRotatesHalvesByPosition() {
    CpuBackend backend;
    const int tokens = 3, heads = 2, dim = 8;
    std::vector<float> x = random_values(tokens * heads * dim, 4);
    const std::vector<float> original = x;
    const float inv_freq[] = {1.0f, 0.1f, 0.01f};  // rotary_dim 6 < head_dim 8
    const std::int32_t positions[] = {0, 7, 1000};
    backend.rope(0, x.data(), tokens, heads, dim, positions, RopeParams{inv_freq, 6, 1.0f});
    for (int t = 0; t < tokens; ++t) {
      for (int h = 0; h < heads; ++h) {
        const float* before = original.data() + (t * heads + h) * dim;
        const float* after = x.data() + (t * heads + h) * dim;
        for (int i = 0; i < 3; ++i) {
          const double angle = double(float(positions[t]) * inv_freq[i]);
          const double a = before[i], b = before[i + 3];
          QVERIFY(std::fabs(after[i] - (a * std::cos(angle) - b * std::sin(angle))) < 1e-5);
          QVERIFY(std::fabs(after[i + 3] - (b * std::cos(angle) + a * std::sin(angle))) < 1e-5);
        }
        QCOMPARE(after[6], before[6]);  // past the rotary dimensions
        QCOMPARE(after[7], before[7]);
      }
    }
  }

  void siluGatingAndResidualAdd() {
    CpuBackend backend;
    const std::vector<float> gate = random_values(1000, 5, 4.0f);
    const std::vector<float> up = random_values(1000, 6);
    std::vector<float> out(1000);
    backend.silu_mul(0, gate.data(), up.data(), 1000, out.data());
    for (std::size_t i = 0; i < out.size(); ++i) {
      const double expected = gate[i] / (1.0 + std::exp(-double(gate[i]))) * up[i];
      QVERIFY(std::fabs(out[i] - expected) < 1e-5 * (1 + std::fabs(expected)));
    }
    std::vector<float> sum = gate;
    backend.add(0, sum.data(), up.data(), 1000);
    for (std::size_t i = 0; i < sum.size(); ++i)
      QCOMPARE(sum[i], gate[i] + up[i]);
  }
};

QUIRE_TEST(CpuBackendOpsTest)
#include "test_cpu_backend_ops.moc"
