// The CPU backend's devices and row-wise ops against plain double-precision
// references on random inputs.

#include <QTest>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include "quire/kernels/cpu/cpu_backend.h"
#include "quire/kernels/cpu/half.h"
#include "test_main.h"

using namespace quire::kernels;

Q_DECLARE_METATYPE(GatedActivation)

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
  // set_exact_decode: decode rows multiplied as prompt rows are. An EXL3
  // MUL1 layer shows the difference: its fast decode rows round the inputs
  // to 8 bits.
  void exactDecodeMultipliesDecodeRowsAsPromptRows() {
    std::mt19937 rng(8);
    std::uniform_int_distribution<int> word(0, 65535);
    std::vector<std::uint16_t> trellis(8 * 8 * 64);
    for (std::uint16_t& w : trellis)
      w = static_cast<std::uint16_t>(word(rng));
    const std::vector<std::uint16_t> suh(128, float_to_half(0.05f));
    const std::vector<std::uint16_t> svh(128, float_to_half(1.0f));
    LinearWeight weight;
    weight.in_features = 128;
    weight.out_features = 128;
    weight.format =
        Exl3Weight{trellis.data(), suh.data(), svh.data(), 4, Exl3Codebook::mul1, 128, 128};
    std::vector<float> x(128);
    std::uniform_real_distribution<float> value(-1.0f, 1.0f);
    for (float& v : x)
      v = value(rng);
    CpuBackend backend;
    std::vector<float> prompt(128), fast(128), exact(128);
    backend.linear(0, x.data(), 1, weight, prompt.data(), ProductRows::prompt);
    backend.linear(0, x.data(), 1, weight, fast.data(), ProductRows::decode);
    backend.set_exact_decode(true);
    backend.linear(0, x.data(), 1, weight, exact.data(), ProductRows::decode);
    QCOMPARE(exact, prompt);
#if defined(__x86_64__) && defined(__GNUC__)
    // Where the register kernels run (AVX2 or AVX-512), the fast rows differ.
    if (__builtin_cpu_supports("avx2")) QVERIFY(fast != prompt);
#endif
  }

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

  // M-RoPE as transformers applies it: cos and sin of every axis over the
  // whole head (cat(freqs, freqs)); Qwen2-VL's sections (doubled) cut the
  // head into chunks, chunk j taken from axis j % 3; Qwen3-VL's interleaved
  // layout takes frequency i from h where i % 3 == 1 and i < 3 * section[1],
  // from w where i % 3 == 2 and i < 3 * section[2], else from t.
  void mropeTurnsEachSectionByItsAxis_data() {
    QTest::addColumn<bool>("interleaved");
    QTest::addColumn<int>("t");
    QTest::addColumn<int>("h");
    QTest::addColumn<int>("w");
    QTest::newRow("sections") << false << 1 << 2 << 3;
    QTest::newRow("interleaved") << true << 2 << 2 << 2;
  }

  void mropeTurnsEachSectionByItsAxis() {
    QFETCH(bool, interleaved);
    QFETCH(int, t);
    QFETCH(int, h);
    QFETCH(int, w);
    CpuBackend backend;
    const int tokens = 3, heads = 2, dim = 12, half = 6;
    std::vector<float> x = random_values(tokens * heads * dim, 6);
    const std::vector<float> original = x;
    const float inv_freq[] = {1.0f, 0.5f, 0.2f, 0.1f, 0.03f, 0.01f};
    const std::int32_t positions[] = {0, 0, 0, 5, 6, 9, 40, 17, 3};  // (t, h, w) per token
    RopeParams rope{inv_freq, dim, 1.0f};
    rope.mrope_section = {t, h, w};
    rope.mrope_interleaved = interleaved;
    backend.rope(0, x.data(), tokens, heads, dim, positions, rope);
    for (int token = 0; token < tokens; ++token) {
      // The axis of each of the head's dims, as transformers picks them.
      std::vector<int> axis(dim);
      if (interleaved) {
        for (int i = 0; i < half; ++i) {
          axis[std::size_t(i)] = (i % 3 == 1 && i < 3 * h) ? 1 : (i % 3 == 2 && i < 3 * w) ? 2 : 0;
          axis[std::size_t(i + half)] = axis[std::size_t(i)];
        }
      } else {
        const int chunks[] = {t, h, w, t, h, w};
        int d = 0;
        for (int j = 0; j < 6; ++j) {
          for (int k = 0; k < chunks[j]; ++k)
            axis[std::size_t(d++)] = j % 3;
        }
      }
      for (int head = 0; head < heads; ++head) {
        const float* before = original.data() + (token * heads + head) * dim;
        const float* after = x.data() + (token * heads + head) * dim;
        for (int d = 0; d < dim; ++d) {
          const int pair = d % half;
          const double angle =
              double(float(positions[3 * token + axis[std::size_t(d)]]) * inv_freq[pair]);
          const double rotated = d < half ? -before[d + half] : before[d - half];
          const double expected = before[d] * std::cos(angle) + rotated * std::sin(angle);
          QVERIFY2(std::fabs(after[d] - expected) < 1e-5,
                   qPrintable(QString("token %1 dim %2").arg(token).arg(d)));
        }
      }
    }
  }

  // Text under M-RoPE (t = h = w) turns exactly as one position does.
  void mropeOfTextIsPlainRope() {
    CpuBackend backend;
    const int tokens = 4, heads = 3, dim = 16;
    std::vector<float> plain = random_values(tokens * heads * dim, 7);
    std::vector<float> multimodal = plain;
    const std::vector<float> inv_freq = random_values(dim / 2, 8, 1.0f);
    const std::int32_t positions[] = {0, 3, 77, 4095};
    const std::int32_t triples[] = {0, 0, 0, 3, 3, 3, 77, 77, 77, 4095, 4095, 4095};
    backend.rope(0, plain.data(), tokens, heads, dim, positions,
                 RopeParams{inv_freq.data(), dim, 1.0f});
    RopeParams rope{inv_freq.data(), dim, 1.0f};
    rope.mrope_section = {2, 3, 3};
    backend.rope(0, multimodal.data(), tokens, heads, dim, triples, rope);
    QCOMPARE(std::memcmp(plain.data(), multimodal.data(), plain.size() * sizeof(float)), 0);
    rope.mrope_section = {2, 3, 2};
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             backend.rope(0, multimodal.data(), tokens, heads, dim, triples, rope));
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

  void gatedActivations_data() {
    QTest::addColumn<GatedActivation>("activation");
    QTest::newRow("silu") << GatedActivation::Silu;
    QTest::newRow("gelu tanh") << GatedActivation::GeluTanh;
  }

  // Random gates and the far ends: where the gate is very negative GELU is a
  // difference of nearly equal terms in its usual form, and where x^3 or
  // e^-2u leave FP32's range the result must still be the limit, not a NaN.
  // The bound: FP32's x^3 and u carry a few units of 2^-24, and e^-2u turns
  // u's relative error into the result's, times 2|u|.
  void gatedActivations() {
    QFETCH(GatedActivation, activation);
    CpuBackend backend;
    std::vector<float> gate = random_values(3000, 7, 4.0f);
    for (const float far :
         {0.0f, 1e-3f, 0.5f, 3.0f, 5.0f, 9.0f, 10.5f, 30.0f, 100.0f, 1e4f, 1e20f, 3e38f}) {
      gate.push_back(far);
      gate.push_back(-far);
    }
    const std::vector<float> up = random_values(gate.size(), 8);
    const auto n = static_cast<std::int64_t>(gate.size());
    std::vector<float> out(gate.size(), std::nanf(""));
    backend.gated_activation(0, activation, gate.data(), up.data(), n, out.data());
    for (std::size_t i = 0; i < gate.size(); ++i) {
      const double x = gate[i];
      const double u = std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x);
      // 0.5 x (1 + tanh(u)) with 1 + tanh(u) = 2 / (1 + e^-2u): the same in
      // exact arithmetic, but the sum of 1 and a tanh near -1 leaves no digits
      // even in double where x is very negative. Where it does not cancel, the
      // two agree.
      const double activated = activation == GatedActivation::Silu ? x / (1.0 + std::exp(-x))
                                                                   : x / (1.0 + std::exp(-2.0 * u));
      if (activation == GatedActivation::GeluTanh && std::fabs(x) < 3.0)
        QVERIFY(std::fabs(activated - 0.5 * x * (1.0 + std::tanh(u))) <= 1e-12);
      const double expected = activated * up[i];
      const double bound =
          activation == GatedActivation::Silu ? 1e-6 : 1e-6 * (1.0 + 2.0 * std::fabs(u));
      QVERIFY2(std::fabs(out[i] - expected) <= bound * std::fabs(expected) + 1e-37,
               qPrintable(QString("gate %1: %2, expected %3").arg(x).arg(out[i]).arg(expected)));
    }
    // In place over the gate, as the forward pass runs it.
    std::vector<float> in_place = gate;
    backend.gated_activation(0, activation, in_place.data(), up.data(), n, in_place.data());
    QVERIFY(std::memcmp(in_place.data(), out.data(), out.size() * sizeof(float)) == 0);
    // Kept for callers: silu_mul is gated_activation with Silu.
    if (activation == GatedActivation::Silu) {
      backend.silu_mul(0, gate.data(), up.data(), n, in_place.data());
      QVERIFY(std::memcmp(in_place.data(), out.data(), out.size() * sizeof(float)) == 0);
    }
  }

  // Near the cap, beyond it by far, and tiny values whose quotient is
  // subnormal: cap * tanh(x / cap) within two roundings of the definition.
  void softCapKeepsValuesWithinTheCap() {
    CpuBackend backend;
    for (const float cap : {50.0f, 30.0f, 1.0f}) {
      std::vector<float> x = random_values(1000, 9, cap);
      for (const float at : {0.0f, 1e-40f, 1e-3f, 0.5f, 0.9f, 1.0f, 1.1f, 2.0f, 3.0f, 10.0f, 1e3f,
                             1e30f, std::numeric_limits<float>::infinity()}) {
        x.push_back(at * cap);
        x.push_back(-at * cap);
      }
      std::vector<float> capped = x;
      backend.soft_cap(0, capped.data(), std::int64_t(x.size()), cap);
      for (std::size_t i = 0; i < x.size(); ++i) {
        const double expected = cap * std::tanh(double(x[i]) / cap);
        QVERIFY2(std::fabs(capped[i] - expected) <= 3e-7 * std::fabs(expected) + 1e-44,
                 qPrintable(QString("%1 capped at %2: %3, expected %4")
                                .arg(x[i])
                                .arg(cap)
                                .arg(capped[i])
                                .arg(expected)));
        QVERIFY(std::fabs(capped[i]) <= cap);
      }
    }
    std::vector<float> x{1.0f};
    for (const float bad : {0.0f, -5.0f, std::numeric_limits<float>::infinity(), std::nanf("")})
      QVERIFY_THROWS_EXCEPTION(std::invalid_argument, backend.soft_cap(0, x.data(), 1, bad));
  }

  // One correctly rounded product each: exactly the double product rounded.
  void scaleMultipliesInPlace() {
    CpuBackend backend;
    const std::vector<float> x = random_values(70001, 10, 3.0f);
    for (const float factor : {std::sqrt(3072.0f), 0.5f, -1.0f, 0.0f}) {
      std::vector<float> scaled = x;
      backend.scale(0, scaled.data(), std::int64_t(x.size()), factor);
      for (std::size_t i = 0; i < x.size(); ++i)
        QCOMPARE(scaled[i], static_cast<float>(double(x[i]) * factor));
    }
  }

  void copyColumnsSplitsAFusedProjection_data() {
    QTest::addColumn<int>("first");
    QTest::addColumn<int>("cols");
    // Phi-3's qkv_proj at a small size: queries 96 wide, keys and values 32.
    QTest::newRow("first slice") << 0 << 96;
    QTest::newRow("middle slice") << 96 << 32;
    QTest::newRow("last slice") << 128 << 32;
    QTest::newRow("whole rows") << 0 << 160;
    QTest::newRow("one column") << 77 << 1;
  }

  void copyColumnsSplitsAFusedProjection() {
    QFETCH(int, first);
    QFETCH(int, cols);
    CpuBackend backend;
    const int rows = 300, width = 160;
    const std::vector<float> x = random_values(std::size_t(rows * width), 11);
    std::vector<float> out(std::size_t(rows * cols), std::nanf(""));
    backend.copy_columns(0, x.data(), rows, width, first, cols, out.data());
    for (int r = 0; r < rows; ++r) {
      for (int c = 0; c < cols; ++c)
        QCOMPARE(out[std::size_t(r * cols + c)], x[std::size_t(r * width + first + c)]);
    }
    QVERIFY_THROWS_EXCEPTION(
        std::invalid_argument,
        backend.copy_columns(0, x.data(), rows, width, width - cols + 1, cols, out.data()));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             backend.copy_columns(0, x.data(), rows, width, -1, cols, out.data()));
  }

  // Two experts' tokens routed out and their weighted outputs added back:
  // gathers copy rows exactly; each scatter adds one rounded product to each
  // element of its rows, and the sums of calls that share rows accumulate.
  void gatherAndScatterRowsForExperts() {
    CpuBackend backend;
    const int tokens = 10, cols = 37;
    const std::vector<float> hidden = random_values(std::size_t(tokens * cols), 12);
    std::vector<float> x = random_values(hidden.size(), 13);
    std::vector<double> expected(x.begin(), x.end()), bound(x.size(), 0.0);
    const std::vector<std::vector<std::int32_t>> experts{{3, 0, 9, 7}, {9, 3, 1}, {3}};
    for (std::size_t e = 0; e < experts.size(); ++e) {
      const std::vector<std::int32_t>& rows = experts[e];
      const auto count = static_cast<std::int64_t>(rows.size());
      std::vector<float> routed(rows.size() * cols, std::nanf(""));
      backend.gather_rows(0, hidden.data(), cols, rows.data(), count, routed.data());
      for (std::size_t i = 0; i < rows.size(); ++i) {
        for (int c = 0; c < cols; ++c)
          QCOMPARE(routed[i * cols + std::size_t(c)], hidden[std::size_t(rows[i] * cols + c)]);
      }
      // The expert's output, weighted by the router's probability for it.
      const std::vector<float> y = random_values(routed.size(), 20 + std::uint32_t(e));
      std::vector<float> weights = random_values(rows.size(), 30 + std::uint32_t(e));
      for (float& weight : weights)
        weight = std::fabs(weight);
      backend.scatter_add_rows(0, x.data(), cols, y.data(), rows.data(), weights.data(), count);
      for (std::size_t i = 0; i < rows.size(); ++i) {
        for (int c = 0; c < cols; ++c) {
          const std::size_t at = std::size_t(rows[i] * cols + c);
          const double added = double(weights[i]) * y[i * cols + std::size_t(c)];
          // Two roundings, each within half a unit of 2^-23 relative.
          bound[at] += 6e-8 * (std::fabs(expected[at] + added) + std::fabs(added));
          expected[at] += added;
        }
      }
    }
    for (std::size_t i = 0; i < x.size(); ++i) {
      QVERIFY2(
          std::fabs(x[i] - expected[i]) <= bound[i],
          qPrintable(QString("element %1: %2, expected %3").arg(i).arg(x[i]).arg(expected[i])));
    }
    // Rows untouched by every expert keep their values exactly.
    for (const int untouched : {2, 4, 5, 6, 8}) {
      for (int c = 0; c < cols; ++c)
        QCOMPARE(double(x[std::size_t(untouched * cols + c)]),
                 expected[std::size_t(untouched * cols + c)]);
    }
    const std::vector<std::int32_t> bad{1, -1};
    const std::vector<float> weights{1.0f, 1.0f};
    std::vector<float> out(2 * cols);
    QVERIFY_THROWS_EXCEPTION(
        std::out_of_range, backend.gather_rows(0, hidden.data(), cols, bad.data(), 2, out.data()));
    QVERIFY_THROWS_EXCEPTION(
        std::out_of_range,
        backend.scatter_add_rows(0, x.data(), cols, out.data(), bad.data(), weights.data(), 2));
  }
};

QUIRE_TEST(CpuBackendOpsTest)
#include "test_cpu_backend_ops.moc"
