// The dp4a decode kernels' integer steps, run on the host (dp4a_unpack.h):
// the input slots line each staged code up with its weight, every code of
// 2, 4 and 8 bits at every position multiplies exactly as a plain integer
// sum says, and the 8-bit inputs stay within half a step of the inputs.

#include <QTest>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "quire/kernels/cuda/dp4a_unpack.h"
#include "test_main.h"

namespace dp4a = quire::kernels::dp4a_unpack;

namespace {

// The words of a 32-value block of `bits`-wide codes (no straddling widths).
std::vector<std::uint32_t> pack_codes(const std::vector<std::uint32_t>& values, int bits) {
  std::vector<std::uint32_t> words(std::size_t(bits), 0u);
  for (int j = 0; j < 32; ++j) {
    words[std::size_t(j * bits / 32)] |= values[std::size_t(j)] << (j * bits % 32);
  }
  return words;
}

// Signed 8-bit codes x[j] placed at their input slots, four to a word.
void stage(const std::vector<int>& x, int bits, std::uint32_t (&staged)[8]) {
  std::fill(std::begin(staged), std::end(staged), 0u);
  for (int j = 0; j < 32; ++j) {
    const int slot = dp4a::input_slot(bits, j);
    staged[slot / 4] |= (std::uint32_t(x[std::size_t(j)]) & 0xffu) << (8 * (slot % 4));
  }
}

template <int Bits>
std::int32_t dot(const std::vector<std::uint32_t>& packed, const std::uint32_t (&staged)[8]) {
  std::uint32_t words[Bits];
  std::copy(packed.begin(), packed.end(), words);
  return dp4a::block_dot<Bits>(words, staged);
}

std::int32_t dot_bits(int bits, const std::vector<std::uint32_t>& packed,
                      const std::uint32_t (&staged)[8]) {
  if (bits == 2) return dot<2>(packed, staged);
  if (bits == 4) return dot<4>(packed, staged);
  return dot<8>(packed, staged);
}

}  // namespace

class Dp4aUnpackTest : public QObject {
  Q_OBJECT

 private slots:
  void inputSlotsArePermutations() {
    for (const int bits : {2, 4, 8}) {
      std::vector<int> seen(32, 0);
      for (int j = 0; j < 32; ++j)
        ++seen[std::size_t(dp4a::input_slot(bits, j))];
      QVERIFY(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
    }
  }

  // Every code at every position (block b puts (b + 7j) mod 2^bits at j),
  // beside inputs over the whole code range, the extremes included.
  void everyCodeMultipliesExactly() {
    std::mt19937 rng(11);
    std::uniform_int_distribution<int> code(-127, 127);
    for (const int bits : {2, 4, 8}) {
      const std::uint32_t codes = 1u << bits;
      for (std::uint32_t b = 0; b < codes; ++b) {
        std::vector<std::uint32_t> values(32);
        std::vector<int> x(32);
        for (int j = 0; j < 32; ++j) {
          values[std::size_t(j)] = (b + 7u * std::uint32_t(j)) % codes;
          x[std::size_t(j)] = b % 3 == 0 ? (j % 2 ? 127 : -127) : code(rng);
        }
        std::uint32_t staged[8];
        stage(x, bits, staged);
        std::int64_t want = 0;
        for (int j = 0; j < 32; ++j)
          want += std::int64_t(x[std::size_t(j)]) * values[std::size_t(j)];
        const std::int32_t got = dot_bits(bits, pack_codes(values, bits), staged);
        if (got != want) {
          QFAIL(qPrintable(
              QStringLiteral("%1 bits, block %2: %3, not %4").arg(bits).arg(b).arg(got).arg(want)));
        }
      }
    }
  }

  // Codes of a block's inputs: the largest maps to +-127, each within half a
  // step (largest / 127) of its input, zeros and NaN to 0.
  void inputCodesStayWithinHalfAStep() {
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> input(-1.0f, 1.0f);
    for (const float magnitude : {1e-20f, 0.01f, 1.0f, 300.0f, 3e30f}) {
      std::vector<float> x(32);
      for (float& v : x)
        v = magnitude * input(rng);
      x[7] = -magnitude;
      float largest = 0.0f;
      for (const float v : x)
        largest = std::max(largest, std::fabs(v));
      const float factor = dp4a::input_factor(largest);
      const double step = double(largest) / 127.0;
      for (const float v : x) {
        const std::int32_t c = dp4a::input_code(v, factor);
        QVERIFY(c >= -127 && c <= 127);
        QVERIFY2(std::fabs(double(c) * step - double(v)) <= 0.5001 * step,
                 qPrintable(QString::number(double(v))));
      }
      QCOMPARE(dp4a::input_code(-magnitude, factor), -127);
    }
    QCOMPARE(dp4a::input_factor(0.0f), 0.0f);
    QCOMPARE(dp4a::input_code(0.5f, dp4a::input_factor(0.0f)), 0);
    QCOMPARE(dp4a::input_code(std::nanf(""), 1.0f), 0);
  }
};

QUIRE_TEST(Dp4aUnpackTest)
#include "test_dp4a_unpack.moc"
