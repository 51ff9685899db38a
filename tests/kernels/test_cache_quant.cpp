#include <QTest>
#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <vector>

#include "quire/kernels/cpu/cache_quant.h"
#include "quire/kernels/cpu/fp8.h"
#include "quire/kernels/cpu/hadamard.h"
#include "quire/kernels/cpu/half.h"
#include "test_main.h"

using namespace quire::kernels;

namespace {

// K/V-like data: unit Gaussians with one outlier channel (x20) per 32 elements,
// at a different position in every head, as real keys show.
std::vector<float> kv_like(std::size_t groups, std::uint32_t seed, float outlier = 20.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> values(groups * kCacheGroup);
  for (float& v : values)
    v = normal(rng);
  for (std::size_t g = 0; g < groups; ++g)
    values[g * kCacheGroup + (g * 7) % kCacheGroup] *= outlier;
  return values;
}

double relative_rms_error(const std::vector<float>& a, const std::vector<float>& b) {
  double error = 0.0, energy = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    error += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
    energy += double(a[i]) * a[i];
  }
  return std::sqrt(error / energy);
}

std::vector<float> round_trip(const std::vector<float>& values, int bits) {
  std::vector<std::uint8_t> packed(values.size() * static_cast<std::size_t>(bits) / 8);
  std::vector<std::uint16_t> scales(values.size() / kCacheGroup);
  quantize_int(values, bits, packed, scales);
  std::vector<float> out(values.size());
  dequantize_int(packed, scales, bits, out);
  return out;
}

// Plain absmax quantization without the rotation, for comparison only.
std::vector<float> round_trip_unrotated(const std::vector<float>& values, int bits) {
  std::vector<float> out(values.size());
  const float middle = float(1 << (bits - 1));
  for (std::size_t g = 0; g < values.size(); g += kCacheGroup) {
    float m = 0.0f;
    for (int i = 0; i < kCacheGroup; ++i)
      m = std::max(m, std::fabs(values[g + i]));
    for (int i = 0; i < kCacheGroup; ++i) {
      const float level =
          std::clamp(std::nearbyint(values[g + i] / m * middle), -middle, middle - 1);
      out[g + i] = level * m / middle;
    }
  }
  return out;
}

}  // namespace

class CacheQuantTest : public QObject {
  Q_OBJECT

 private slots:
  void hadamardIsOrthonormalAndItsOwnInverse() {
    std::array<float, 32> values{};
    std::mt19937 rng(5);
    std::normal_distribution<float> normal;
    for (float& v : values)
      v = normal(rng);
    const std::array<float, 32> original = values;
    double norm_before = 0, norm_after = 0;
    for (float v : values)
      norm_before += double(v) * v;
    hadamard32(values.data());
    for (float v : values)
      norm_after += double(v) * v;
    QVERIFY(std::fabs(norm_after - norm_before) < 1e-4 * norm_before);
    hadamard32(values.data());
    for (int i = 0; i < 32; ++i)
      QVERIFY(std::fabs(values[i] - original[i]) < 1e-5f);
  }

  void hadamardOfTheFirstTwoUnitVectors() {
    std::array<float, 32> e0{}, e1{};
    e0[0] = 1.0f;
    e1[1] = 1.0f;
    hadamard32(e0.data());
    hadamard32(e1.data());
    for (int i = 0; i < 32; ++i) {
      QCOMPARE(e0[i], kInvSqrt32);
      QCOMPARE(e1[i], (i % 2 == 0) ? kInvSqrt32 : -kInvSqrt32);
    }
  }

  // x = (3, 1, 0, ...) rotates to 4/sqrt(32) at even and 2/sqrt(32) at odd
  // positions. absmax 0.70710677 is 0x39a8 (0.70703125) in FP16. Q4: even
  // levels round(8.0009) + 8 = 16, clamped to 15; odd round(4.0004) + 8 = 12.
  void handCheckedQ4Group() {
    std::array<float, 32> x{};
    x[0] = 3.0f;
    x[1] = 1.0f;
    std::array<std::uint8_t, 32> levels{};
    QCOMPARE(quantize_group(x.data(), 4, levels.data()), std::uint16_t(0x39a8));
    for (int i = 0; i < 32; ++i)
      QCOMPARE(int(levels[i]), i % 2 == 0 ? 15 : 12);
    std::array<std::uint8_t, 16> packed{};
    pack_levels(levels, 4, packed);
    for (std::uint8_t byte : packed)
      QCOMPARE(int(byte), 0xcf);

    x[0] = -3.0f;
    x[1] = -1.0f;
    QCOMPARE(quantize_group(x.data(), 4, levels.data()), std::uint16_t(0x39a8));
    pack_levels(levels, 4, packed);
    for (std::uint8_t byte : packed)
      QCOMPARE(int(byte), 0x40);  // levels 0 and 4
  }

  void handCheckedQ8Group() {
    std::array<float, 32> x{};
    x[0] = 3.0f;
    x[1] = 1.0f;
    std::array<std::uint8_t, 32> levels{};
    QCOMPARE(quantize_group(x.data(), 8, levels.data()), std::uint16_t(0x39a8));
    for (int i = 0; i < 32; ++i)
      QCOMPARE(int(levels[i]), i % 2 == 0 ? 255 : 192);
    // Dequantized: 127 * s/128 at even, 64 * s/128 at odd positions, rotated back:
    // x0 = 16 * (127 + 64) * s/128 / sqrt(32), x1 = 16 * (127 - 64) * s/128 / sqrt(32).
    std::array<float, 32> out{};
    dequantize_group(levels.data(), 0x39a8, 8, out.data());
    const double s = 0.70703125;
    QVERIFY(std::fabs(out[0] - 16 * 191 * s / 128 / std::sqrt(32.0)) < 1e-5);
    QVERIFY(std::fabs(out[1] - 16 * 63 * s / 128 / std::sqrt(32.0)) < 1e-5);
    for (int i = 2; i < 32; ++i)
      QCOMPARE(out[i], 0.0f);
  }

  void q4PacksLowNibbleFirstInLittleEndianWords() {
    std::array<std::uint8_t, 32> levels{};
    for (int i = 0; i < 32; ++i)
      levels[i] = static_cast<std::uint8_t>(i % 16);
    std::array<std::uint8_t, 16> packed{};
    pack_levels(levels, 4, packed);
    // Word 0 holds elements 0..7 as 0x76543210, stored little-endian.
    const std::array<std::uint8_t, 4> word0{0x10, 0x32, 0x54, 0x76};
    for (int i = 0; i < 4; ++i)
      QCOMPARE(packed[i], word0[i]);
    QCOMPARE(int(packed[7]), 0xfe);
    std::array<std::uint8_t, 32> unpacked{};
    unpack_levels(packed, 4, unpacked);
    QCOMPARE(unpacked, levels);
  }

  void zeroAndTinyGroupsDecodeToZero() {
    for (const float magnitude : {0.0f, 1e-9f}) {
      std::vector<float> values(64, magnitude);
      values[5] = -magnitude;
      for (const int bits : {4, 8}) {
        std::vector<std::uint8_t> packed(64 * bits / 8);
        std::vector<std::uint16_t> scales(2);
        quantize_int(values, bits, packed, scales);
        QCOMPARE(scales[0], std::uint16_t(0));
        std::vector<float> out(64, 1.0f);
        dequantize_int(packed, scales, bits, out);
        for (float v : out)
          QCOMPARE(v, 0.0f);
      }
    }
  }

  void hugeValuesStayFinite() {
    std::vector<float> values = kv_like(4, 9);
    for (float& v : values)
      v *= 1e5f;
    const std::vector<float> out = round_trip(values, 8);
    for (float v : out)
      QVERIFY(std::isfinite(v));
  }

  // Per group, every rotated element is off by at most one quantization step
  // (half a step, except the clamped top level), and the rotation preserves
  // norms, so ||x - x'|| <= sqrt(32) * step.
  void roundTripErrorIsBoundedPerGroup_data() {
    QTest::addColumn<int>("bits");
    QTest::addColumn<double>("maxRelativeRms");
    QTest::newRow("q8") << 8 << 0.008;
    QTest::newRow("q4") << 4 << 0.12;
  }

  void roundTripErrorIsBoundedPerGroup() {
    QFETCH(int, bits);
    QFETCH(double, maxRelativeRms);
    const std::vector<float> values = kv_like(512, 21);
    std::vector<std::uint8_t> packed(values.size() * static_cast<std::size_t>(bits) / 8);
    std::vector<std::uint16_t> scales(values.size() / kCacheGroup);
    quantize_int(values, bits, packed, scales);
    std::vector<float> out(values.size());
    dequantize_int(packed, scales, bits, out);
    for (std::size_t g = 0; g < scales.size(); ++g) {
      const double step = half_to_float(scales[g]) / double(1 << (bits - 1));
      double error = 0.0;
      for (int i = 0; i < kCacheGroup; ++i) {
        const double d = double(values[g * 32 + i]) - out[g * 32 + i];
        error += d * d;
      }
      QVERIFY2(std::sqrt(error) <= std::sqrt(32.0) * step * 1.001 + 1e-6,
               qPrintable(QString("group %1").arg(g)));
    }
    QVERIFY(relative_rms_error(values, out) < maxRelativeRms);
  }

  void rotationTamesOutlierChannels() {
    const std::vector<float> values = kv_like(512, 33, 30.0f);
    const double rotated = relative_rms_error(values, round_trip(values, 4));
    const double plain = relative_rms_error(values, round_trip_unrotated(values, 4));
    QVERIFY2(rotated < 0.7 * plain, qPrintable(QString("%1 vs %2").arg(rotated).arg(plain)));
  }

  void rejectsBadShapes() {
    std::vector<float> values(40);
    std::vector<std::uint8_t> packed(20);
    std::vector<std::uint16_t> scales(1);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, quantize_int(values, 4, packed, scales));
    values.resize(32);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, quantize_int(values, 6, packed, scales));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, quantize_int(values, 4, packed, scales));
  }

  void fp8ScalesArePowersOfTwo() {
    QCOMPARE(fp8_scale_for(0.0f), 0.0f);
    QCOMPARE(fp8_scale_for(448.0f), 1.0f);
    QCOMPARE(fp8_scale_for(449.0f), 2.0f);
    QCOMPARE(fp8_scale_for(224.0f), 0.5f);
    QCOMPARE(fp8_scale_for(1.0f), 0.00390625f);  // 1/448 rounds up to 2^-8
    std::mt19937 rng(2);
    std::uniform_real_distribution<float> exponent(-20.0f, 20.0f);
    for (int i = 0; i < 10000; ++i) {
      const float absmax = std::exp2(exponent(rng));
      const float scale = fp8_scale_for(absmax);
      int e = 0;
      QCOMPARE(std::frexp(scale, &e), 0.5f);
      QVERIFY(absmax / scale <= kE4m3Max);
      QVERIFY(absmax / (scale / 2) > kE4m3Max);
    }
  }

  void fp8PageHeadGrowsItsScaleWithoutLosingBits() {
    constexpr int kHeadDim = 64, kTokens = 6, kStride = 2 * kHeadDim;  // two heads interleaved
    std::mt19937 rng(17);
    std::uniform_real_distribution<float> uniform(0.5f, 1.0f);
    std::vector<float> values(kTokens * kHeadDim);
    for (int t = 0; t < kTokens; ++t) {
      for (int d = 0; d < kHeadDim; ++d) {
        // Magnitudes grow with every token, so each write needs a larger scale.
        values[t * kHeadDim + d] =
            uniform(rng) * std::exp2(float(2 * t)) * ((d % 3) ? 1.0f : -1.0f);
      }
    }
    std::vector<std::uint8_t> page(kTokens * kStride, 0xaa);
    const Fp8HeadBlock block{page.data(), kStride, kHeadDim};
    float scale = 0.0f;
    for (int t = 0; t < kTokens; ++t) {
      fp8_write_head(block, t, 1, std::span<const float>(values).subspan(t * kHeadDim, kHeadDim),
                     scale);
    }
    float absmax = 0.0f;
    for (float v : values)
      absmax = std::max(absmax, std::fabs(v));
    QCOMPARE(scale, fp8_scale_for(absmax));
    // Encoding everything at once under the final scale gives the same codes:
    // the rescales were exact exponent shifts.
    std::vector<std::uint8_t> direct(kTokens * kStride, 0xaa);
    float direct_scale = 0.0f;
    fp8_write_head(Fp8HeadBlock{direct.data(), kStride, kHeadDim}, 0, kTokens, values,
                   direct_scale);
    QCOMPARE(direct_scale, scale);
    for (int t = 0; t < kTokens; ++t) {
      for (int d = 0; d < kHeadDim; ++d) {
        QCOMPARE(page[t * kStride + d], direct[t * kStride + d]);
      }
      // The other head's bytes are untouched.
      QCOMPARE(page[t * kStride + kHeadDim], std::uint8_t(0xaa));
    }
    std::vector<float> out(values.size());
    fp8_read_head(block, kTokens, scale, out);
    for (std::size_t i = 0; i < values.size(); ++i) {
      const double bound = std::max(std::fabs(values[i]) / 16.0, scale * std::ldexp(1.0, -10));
      QVERIFY(std::fabs(out[i] - values[i]) <= bound);
    }
  }

  void fp8PageHeadOfZerosKeepsNoScale() {
    std::vector<std::uint8_t> page(64, 0xaa);
    std::vector<float> zeros(64, 0.0f);
    float scale = 0.0f;
    fp8_write_head(Fp8HeadBlock{page.data(), 64, 64}, 0, 1, zeros, scale);
    QCOMPARE(scale, 0.0f);
    std::vector<float> out(64, 1.0f);
    fp8_read_head(Fp8HeadBlock{page.data(), 64, 64}, 1, scale, out);
    for (float v : out)
      QCOMPARE(v, 0.0f);
  }
};

QUIRE_TEST(CacheQuantTest)
#include "test_cache_quant.moc"
