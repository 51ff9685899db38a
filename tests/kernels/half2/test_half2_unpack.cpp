// The half2 decode kernels' FP16 steps, run on the host with a software FP16
// that rounds as the GPU does (soft_half.h): the software FP16 against the
// compiler's binary16; the constants against their values; every code of
// every width at every position of a block, with every zero point the
// formats allow, unpacked to exactly q - zero; and a block's dot product of
// staged inputs within the bound its error analysis gives, without overflow
// at the largest codes and inputs.

#include <QTest>
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "quire/kernels/cuda/half2_unpack.h"
#include "soft_half.h"
#include "test_main.h"

namespace soft = quire::test::soft_half;
namespace unpack = quire::kernels::half2_unpack;

namespace {

std::uint16_t exact_half(double value) {
  const auto half = static_cast<_Float16>(value);
  if (static_cast<double>(half) != value) QTest::qFail("not an FP16 value", __FILE__, __LINE__);
  return std::bit_cast<std::uint16_t>(half);
}

// The words of a 32-value block holding values[0..32) of `bits` bits each.
std::vector<std::uint32_t> pack(const std::vector<std::uint32_t>& values, int bits) {
  std::vector<std::uint32_t> words(std::size_t(bits), 0u);
  for (int j = 0; j < 32; ++j) {
    const int bit = j * bits;
    words[std::size_t(bit / 32)] |= values[std::size_t(j)] << (bit % 32);
    if (bit % 32 + bits > 32)
      words[std::size_t(bit / 32 + 1)] |= values[std::size_t(j)] >> (32 - bit % 32);
  }
  return words;
}

template <int Bits>
void unpack_any(const std::vector<std::uint32_t>& packed, const unpack::Centering& c,
                std::uint32_t (&pairs)[unpack::kBlockPairs]) {
  std::uint32_t words[Bits];
  std::copy(packed.begin(), packed.end(), words);
  unpack::unpack_block<Bits, soft::PairOps>(words, c, pairs);
}

void unpack_bits(int bits, const std::vector<std::uint32_t>& packed, const unpack::Centering& c,
                 std::uint32_t (&pairs)[unpack::kBlockPairs]) {
  switch (bits) {
    case 2:
      return unpack_any<2>(packed, c, pairs);
    case 3:
      return unpack_any<3>(packed, c, pairs);
    case 4:
      return unpack_any<4>(packed, c, pairs);
    case 5:
      return unpack_any<5>(packed, c, pairs);
    case 6:
      return unpack_any<6>(packed, c, pairs);
    default:
      return unpack_any<8>(packed, c, pairs);
  }
}

// Every code at every position: block b puts code (b + 7j) mod 2^bits at
// position j, so 2^bits blocks give each position every code, beside
// neighbours that vary too.
QString check_every_code(int bits, std::uint32_t zero) {
  const std::uint32_t codes = 1u << bits;
  const unpack::Centering c = unpack::centering(zero);
  for (std::uint32_t b = 0; b < codes; ++b) {
    std::vector<std::uint32_t> values(32);
    for (int j = 0; j < 32; ++j)
      values[std::size_t(j)] = (b + 7u * std::uint32_t(j)) % codes;
    std::uint32_t pairs[unpack::kBlockPairs];
    unpack_bits(bits, pack(values, bits), c, pairs);
    for (int p = 0; p < unpack::kBlockPairs; ++p) {
      for (int lane = 0; lane < 2; ++lane) {
        const int j = unpack::pair_value(bits, p, lane);
        const auto got = static_cast<std::uint16_t>(pairs[p] >> (16 * lane));
        const double want = double(values[std::size_t(j)]) - double(zero);
        if (got != exact_half(want)) {
          return QStringLiteral(
                     "%1 bits, zero %2: pair %3 lane %4 (value %5, code %6) is %7, not %8")
              .arg(bits)
              .arg(zero)
              .arg(p)
              .arg(lane)
              .arg(j)
              .arg(values[std::size_t(j)])
              .arg(double(soft::to_float(got)))
              .arg(want);
        }
      }
    }
  }
  return {};
}

}  // namespace

class Half2UnpackTest : public QObject {
  Q_OBJECT

 private slots:
  // Sums, differences and products of two FP16 values rounded once are what
  // the compiler's binary16 gives (its float arithmetic rounds each of
  // these correctly); fused multiply-adds against an exact double whenever
  // the double is exact, and a few that a double rounding would get wrong.
  void softHalfRoundsAsTheGpu() {
    std::mt19937 rng(7);
    std::uniform_int_distribution<int> bits(0, 0xffff);
    int checked = 0;
    for (int i = 0; i < 200000; ++i) {
      const auto a = static_cast<std::uint16_t>(bits(rng));
      const auto b = static_cast<std::uint16_t>(bits(rng));
      if (!soft::finite(a) || !soft::finite(b)) continue;
      const _Float16 ha = soft::to_compiler(a), hb = soft::to_compiler(b);
      const auto sum = soft::from_compiler(static_cast<_Float16>(ha + hb));
      const auto difference = soft::from_compiler(static_cast<_Float16>(ha - hb));
      const auto product = soft::from_compiler(static_cast<_Float16>(ha * hb));
      QCOMPARE(soft::add(a, b), sum);
      QCOMPARE(soft::sub(a, b), difference);
      if (product != 0x8000u && product != 0x0000u) QCOMPARE(soft::mul(a, b), product);
      const auto c = static_cast<std::uint16_t>(bits(rng));
      if (!soft::finite(c)) continue;
      const double exact =
          double(soft::to_float(a)) * double(soft::to_float(b)) + double(soft::to_float(c));
      const double ab = double(soft::to_float(a)) * double(soft::to_float(b));
      if (exact - ab != double(soft::to_float(c))) continue;  // the double rounded
      const auto want = soft::from_compiler(static_cast<_Float16>(exact));
      if (want == 0x0000u || want == 0x8000u) continue;
      QCOMPARE(soft::fma(a, b, c), want);
      ++checked;
    }
    QVERIFY(checked > 50000);
    // (1 + 2^-10)(1 - 2^-11) - 1 = 2^-11 - 2^-21 fused; the product alone
    // would round to 1 first and leave 0.
    QCOMPARE(soft::fma(0x3c01u, 0x3bffu, exact_half(-1.0)),
             exact_half(std::ldexp(1.0, -11) - std::ldexp(1.0, -21)));
    // 2048 + (1 + 2^-10) lies just above the tie between 2048 and 2050.
    QCOMPARE(soft::fma(0x3c01u, exact_half(1.0), exact_half(2048.0)), exact_half(2050.0));
    QCOMPARE(soft::add(exact_half(2048.0), exact_half(1.0)), exact_half(2048.0));
    QCOMPARE(soft::add(exact_half(2050.0), exact_half(1.0)), exact_half(2052.0));
    QCOMPARE(soft::fma(exact_half(1.0), exact_half(1.0), exact_half(2048.0)),
             exact_half(2048.0));  // 2049 ties to even
    QCOMPARE(soft::fma(exact_half(65504.0), exact_half(2.0), 0), std::uint16_t{0x7c00});
    QCOMPARE(soft::mul(exact_half(std::ldexp(1.0, -14)), exact_half(0.5)),
             exact_half(std::ldexp(1.0, -15)));  // into the subnormals
  }

  // The constants are the FP16 values they are named for.
  void constantsAreTheirValues() {
    QCOMPARE(unpack::kMagicPair, (std::uint32_t{exact_half(1024)} * 0x10001u));
    for (std::uint32_t zero = 0; zero <= 256; ++zero) {
      const std::uint32_t pair = unpack::magic_plus(zero);
      QCOMPARE(pair & 0xffffu, std::uint32_t{exact_half(1024.0 + zero)});
      QCOMPARE(pair >> 16, pair & 0xffffu);
    }
    for (const int factor : {4, 16, 64}) {
      QCOMPARE(unpack::reciprocal(factor) & 0xffffu, std::uint32_t{exact_half(1.0 / factor)});
      for (std::uint32_t zero = 0; zero <= 16; ++zero) {
        QCOMPARE(unpack::negative_shifted(factor, zero) & 0xffffu,
                 std::uint32_t{exact_half(-(1024.0 / factor + zero))});
      }
    }
  }

  // value_slot is the inverse of pair_value: staging input j at its slot
  // lines it up with value j's weight.
  void slotsInvertPairs() {
    for (const int bits : {2, 3, 4, 5, 6, 8}) {
      std::vector<int> seen(32, 0);
      for (int p = 0; p < unpack::kBlockPairs; ++p) {
        for (int lane = 0; lane < 2; ++lane) {
          const int j = unpack::pair_value(bits, p, lane);
          QVERIFY(j >= 0 && j < 32);
          ++seen[std::size_t(j)];
          QCOMPARE(unpack::value_slot(bits, j), 2 * p + lane);
        }
      }
      QVERIFY(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
    }
  }

  void everyCodeOfEveryWidth_data() {
    QTest::addColumn<int>("bits");
    QTest::addColumn<int>("first_zero");
    QTest::addColumn<int>("last_zero");
    // EXL2's zero point is 2^(bits-1); GPTQ's (4 and 8 bits, and 2 bits for
    // the narrow forms) any code, plus one in v1 checkpoints (up to 2^bits).
    QTest::newRow("2 bits, every zero") << 2 << 0 << 4;
    QTest::newRow("3 bits, EXL2") << 3 << 4 << 4;
    QTest::newRow("4 bits, every zero") << 4 << 0 << 16;
    QTest::newRow("5 bits, EXL2") << 5 << 16 << 16;
    QTest::newRow("6 bits, EXL2") << 6 << 32 << 32;
    QTest::newRow("8 bits, every zero") << 8 << 0 << 256;
  }
  void everyCodeOfEveryWidth() {
    QFETCH(int, bits);
    QFETCH(int, first_zero);
    QFETCH(int, last_zero);
    for (int zero = first_zero; zero <= last_zero; ++zero) {
      const QString problem = check_every_code(bits, std::uint32_t(zero));
      if (!problem.isEmpty()) QFAIL(qPrintable(problem));
    }
  }

  void inputScaleBringsTheLargestInputIntoTwoToFour() {
    for (const float largest :
         {1e-30f, 3e-5f, 0.1f, 1.0f, 2.0f, 3.999f, 4.0f, 1000.0f, 6e4f, 3e38f}) {
      const float factor =
          std::bit_cast<float>(unpack::block_input_scale(std::bit_cast<std::uint32_t>(largest)));
      QVERIFY2(largest * factor >= 2.0f && largest * factor < 4.0f,
               qPrintable(QString::number(largest)));
    }
    QCOMPARE(unpack::block_input_scale(0u), 0x3f800000u);
    QCOMPARE(unpack::block_input_scale(0x7f800000u), 0x3f800000u);
  }

  // A block's product as the kernels compute it: inputs scaled into [2, 4)
  // and rounded to FP16, 16 pair multiply-adds from zero, the two lanes
  // added in FP32 and the scale undone. Its error is at most the inputs'
  // rounding (2^-11 of each term) plus one rounding of the running sum per
  // multiply-add (16 per lane, each at most 2^-11 of the sum so far), so
  // within 17 * 2^-11 of the sum of |x| * |q - zero|; the largest codes and
  // inputs stay finite.
  void blockDotStaysWithinItsBound_data() {
    QTest::addColumn<int>("bits");
    QTest::addColumn<int>("zero");
    QTest::addColumn<double>("magnitude");
    QTest::newRow("4 bits, EXL2, activations near 1") << 4 << 8 << 1.0;
    QTest::newRow("4 bits, GPTQ zero 0, outliers of 3000") << 4 << 0 << 3000.0;
    QTest::newRow("8 bits, GPTQ v1 zero 256, small inputs") << 8 << 256 << 1e-3;
    QTest::newRow("8 bits, EXL2, huge inputs") << 8 << 128 << 1e30;
    QTest::newRow("2 bits, EXL2") << 2 << 2 << 0.5;
    QTest::newRow("6 bits, EXL2") << 6 << 32 << 7.0;
  }
  void blockDotStaysWithinItsBound() {
    QFETCH(int, bits);
    QFETCH(int, zero);
    QFETCH(double, magnitude);
    std::mt19937 rng(std::uint32_t(bits * 1000 + zero));
    std::uniform_real_distribution<double> input(-1.0, 1.0);
    const std::uint32_t codes = 1u << bits;
    double worst = 0.0;
    for (int trial = 0; trial < 2000; ++trial) {
      std::vector<std::uint32_t> values(32);
      std::vector<float> x(32);
      for (int j = 0; j < 32; ++j) {
        // The first trials take the codes farthest from the zero point.
        values[std::size_t(j)] =
            trial < 10 ? (zero * 2 >= int(codes) ? 0u : codes - 1u) : std::uint32_t(rng()) % codes;
        x[std::size_t(j)] = float(magnitude * (trial < 10 ? 1.0 : input(rng)));
      }
      float largest = 0.0f;
      for (const float v : x)
        largest = std::max(largest, std::fabs(v));
      const float factor =
          std::bit_cast<float>(unpack::block_input_scale(std::bit_cast<std::uint32_t>(largest)));
      std::uint16_t staged[32];
      for (int j = 0; j < 32; ++j) {
        staged[unpack::value_slot(bits, j)] =
            unpack::staged_input<soft::PairOps>(x[std::size_t(j)], factor);
      }
      std::uint32_t x_pairs[unpack::kBlockPairs];
      for (int p = 0; p < unpack::kBlockPairs; ++p) {
        x_pairs[p] = soft::PairOps::join(staged[2 * p], staged[2 * p + 1]);
      }
      std::uint32_t w_pairs[unpack::kBlockPairs];
      unpack_bits(bits, pack(values, bits), unpack::centering(std::uint32_t(zero)), w_pairs);
      const std::uint32_t acc =
          unpack::dot_pairs<unpack::kBlockPairs, soft::PairOps>(x_pairs, w_pairs, 0u);
      const double got = (double(soft::to_float(soft::PairOps::low(acc))) +
                          double(soft::to_float(soft::PairOps::high(acc)))) /
                         double(factor);
      double exact = 0.0, scale = 0.0;
      for (int j = 0; j < 32; ++j) {
        const double w = double(values[std::size_t(j)]) - zero;
        exact += double(x[std::size_t(j)]) * w;
        scale += std::fabs(double(x[std::size_t(j)]) * w);
      }
      QVERIFY2(std::isfinite(got), "the block's half sum overflowed");
      const double error = std::fabs(got - exact);
      QVERIFY2(error <= 17.0 * std::ldexp(1.0, -11) * scale + 1e-300,
               qPrintable(QStringLiteral("trial %1: %2 against %3 (scale %4)")
                              .arg(trial)
                              .arg(got)
                              .arg(exact)
                              .arg(scale)));
      if (scale > 0) worst = std::max(worst, error / scale);
    }
    qInfo("largest error %.3g of the block's magnitude (bound %.3g)", worst,
          17.0 * std::ldexp(1.0, -11));
  }
};

QUIRE_TEST(Half2UnpackTest)
#include "test_half2_unpack.moc"
