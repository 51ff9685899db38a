#include <QString>
#include <QTest>
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "quire/kernels/cpu/half.h"
#include "quire/kernels/cpu/simd.h"
#include "test_main.h"

using namespace quire::kernels;

namespace {

// The compiler's own binary16 type is the independent reference.
std::uint16_t reference_half(float value) {
  return std::bit_cast<std::uint16_t>(static_cast<_Float16>(value));
}

// bfloat16 by comparing the two neighbours in double precision, ties to even.
std::uint16_t reference_bf16(float value) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  const std::uint32_t lower = bits & 0xffff0000u;
  const std::uint32_t upper = lower + 0x10000u;
  const double below = std::fabs(double(value) - double(std::bit_cast<float>(lower)));
  const double above = std::fabs(double(std::bit_cast<float>(upper)) - double(value));
  if (below < above) return static_cast<std::uint16_t>(lower >> 16);
  if (above < below) return static_cast<std::uint16_t>(upper >> 16);
  return static_cast<std::uint16_t>(((lower >> 16) & 1u) ? upper >> 16 : lower >> 16);
}

}  // namespace

class HalfTest : public QObject {
  Q_OBJECT

 private slots:
  void everyHalfWidensExactly() {
    for (std::uint32_t bits = 0; bits < 0x10000u; ++bits) {
      const auto h = static_cast<std::uint16_t>(bits);
      const float expected = static_cast<float>(std::bit_cast<_Float16>(h));
      const float actual = half_to_float(h);
      if (std::isnan(expected)) {
        QVERIFY(std::isnan(actual));
      } else {
        QCOMPARE(std::bit_cast<std::uint32_t>(actual), std::bit_cast<std::uint32_t>(expected));
      }
    }
  }

  // The array conversion (F16C where the processor has it) against the
  // scalar one, in runs whose lengths leave every tail size.
  void arraysOfHalvesWidenExactly() {
    std::vector<std::uint16_t> halves(0x10000u);
    for (std::uint32_t bits = 0; bits < 0x10000u; ++bits)
      halves[bits] = static_cast<std::uint16_t>(bits);
    std::vector<float> widened(halves.size(), std::nanf(""));
    for (std::size_t begin = 0, count = 0; begin < halves.size(); begin += count) {
      count = std::min<std::size_t>(begin % 41 + 1, halves.size() - begin);
      widen_halves(halves.data() + begin, std::int64_t(count), widened.data() + begin);
    }
    for (std::uint32_t bits = 0; bits < 0x10000u; ++bits) {
      const float expected = half_to_float(halves[bits]);
      if (std::isnan(expected)) {
        QVERIFY(std::isnan(widened[bits]));
      } else {
        QCOMPARE(std::bit_cast<std::uint32_t>(widened[bits]),
                 std::bit_cast<std::uint32_t>(expected));
      }
    }
  }

  // Rounding arrays through FP16 (F16C where the processor has it) agrees with
  // the scalar conversions on random floats of every magnitude FP16 covers,
  // its subnormals, the midpoints between halves and overflow, in runs that
  // leave every tail size.
  void arraysRoundThroughHalvesLikeTheScalarConversions() {
    std::mt19937 rng(11);
    std::vector<float> values;
    for (std::uint32_t bits = 0; bits < 0x7c00u; ++bits) {
      const float half = half_to_float(static_cast<std::uint16_t>(bits));
      const float next = half_to_float(static_cast<std::uint16_t>(bits + 1));
      values.push_back(half);
      values.push_back(-(half + next) / 2.0f);  // a tie
      values.push_back(std::nextafter((half + next) / 2.0f, next));
    }
    std::uniform_real_distribution<float> exponent(-30.0f, 17.0f);
    for (int i = 0; i < 100000; ++i)
      values.push_back(std::exp2(exponent(rng)) * (i % 2 ? 1.0f : -1.0f));
    std::vector<float> rounded = values;
    for (std::size_t begin = 0, count = 0; begin < rounded.size(); begin += count) {
      count = std::min<std::size_t>(begin % 37 + 1, rounded.size() - begin);
      round_through_halves(rounded.data() + begin, std::int64_t(count));
    }
    for (std::size_t i = 0; i < values.size(); ++i) {
      const float expected = half_to_float(float_to_half(values[i]));
      if (std::bit_cast<std::uint32_t>(rounded[i]) != std::bit_cast<std::uint32_t>(expected)) {
        QFAIL(qPrintable(QString("%1 rounds to %2, expected %3")
                             .arg(double(values[i]), 0, 'g', 9)
                             .arg(double(rounded[i]), 0, 'g', 9)
                             .arg(double(expected), 0, 'g', 9)));
      }
    }
  }

  void everyHalfAndEveryMidpointNarrowsLikeTheCompiler() {
    for (std::uint32_t bits = 0; bits < 0x10000u; ++bits) {
      const float value = half_to_float(static_cast<std::uint16_t>(bits));
      if (std::isnan(value)) continue;
      QCOMPARE(float_to_half(value), reference_half(value));
      // Midpoints to the next half value and their float neighbours exercise rounding.
      const float next = half_to_float(static_cast<std::uint16_t>(bits + 1));
      if (!std::isfinite(next) || std::isnan(next) || (bits & 0x7fffu) == 0x7bffu) continue;
      const float mid = static_cast<float>((double(value) + double(next)) / 2.0);
      for (const float probe : {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e30f)}) {
        QCOMPARE(float_to_half(probe), reference_half(probe));
      }
    }
  }

  void randomFloatsNarrowLikeTheCompiler() {
    std::mt19937 rng(7);
    for (int i = 0; i < 200000; ++i) {
      const float value = std::bit_cast<float>(static_cast<std::uint32_t>(rng()));
      if (std::isnan(value)) {
        QVERIFY(std::isnan(half_to_float(float_to_half(value))));
        continue;
      }
      QCOMPARE(float_to_half(value), reference_half(value));
    }
  }

  void bfloat16RoundsToNearestEven() {
    std::mt19937 rng(11);
    for (int i = 0; i < 200000; ++i) {
      const float value = std::bit_cast<float>(static_cast<std::uint32_t>(rng()));
      if (std::isnan(value) || std::isinf(value)) continue;
      if ((std::bit_cast<std::uint32_t>(value) & 0x7fffffffu) >= 0x7f7f8000u) continue;  // overflow
      QCOMPARE(float_to_bf16(value), reference_bf16(value));
      QCOMPARE(bf16_to_float(float_to_bf16(bf16_to_float(float_to_bf16(value)))),
               bf16_to_float(float_to_bf16(value)));
    }
    QCOMPARE(float_to_bf16(1.0f), std::uint16_t(0x3f80));
    QCOMPARE(bf16_to_float(0xc040), -3.0f);
    QVERIFY(std::isnan(bf16_to_float(float_to_bf16(std::nanf("")))));
  }
};

QUIRE_TEST(HalfTest)
#include "test_half.moc"
