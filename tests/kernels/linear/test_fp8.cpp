// The E4M3 8-bit float of FP8 checkpoints: the values of its codes as the
// OCP 8-bit float specification and PyTorch's float8_e4m3fn define them, and
// conversion to the nearest code as PyTorch's .to(torch.float8_e4m3fn)
// rounds (to nearest, ties to even) after the clamp to ±448 that FP8
// checkpoint makers apply; and the decode products of FP8 weights, which
// widen the codes in vector registers, give every code exactly its value.

#include <QTest>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "quire/kernels/cpu/linear.h"
#include "quire/kernels/cpu/thread_pool.h"
#include "quire/kernels/fp8.h"
#include "test_main.h"

using namespace quire::kernels;

class Fp8CodecTest : public QObject {
  Q_OBJECT

 private slots:
  void codesHaveTheirValues() {
    QCOMPARE(e4m3_to_float(0x00), 0.0f);
    QVERIFY(std::signbit(e4m3_to_float(0x80)));
    QCOMPARE(e4m3_to_float(0x38), 1.0f);  // exponent 7 = bias
    QCOMPARE(e4m3_to_float(0x3C), 1.5f);  // mantissa 4 of 8
    QCOMPARE(e4m3_to_float(0xC0), -2.0f);
    QCOMPARE(e4m3_to_float(0x7E), 448.0f);        // the largest: 1.75 * 2^8
    QCOMPARE(e4m3_to_float(0x77), 240.0f);        // 1.875 * 2^7
    QCOMPARE(e4m3_to_float(0x08), 0.015625f);     // the smallest normal: 2^-6
    QCOMPARE(e4m3_to_float(0x01), 0.001953125f);  // the smallest subnormal: 2^-9
    QCOMPARE(e4m3_to_float(0x07), 0.013671875f);  // 7 * 2^-9
    QVERIFY(std::isnan(e4m3_to_float(0x7F)));
    QVERIFY(std::isnan(e4m3_to_float(0xFF)));
    QVERIFY(!std::isnan(e4m3_to_float(0x78)));  // exponent 15 is a normal one: 256
    QCOMPARE(e4m3_to_float(0x78), 256.0f);
  }

  void everyFiniteCodeComesBack() {
    for (int code = 0; code < 256; ++code) {
      if ((code & 0x7F) == 0x7F) continue;
      const auto bits = static_cast<std::uint8_t>(code);
      QCOMPARE(float_to_e4m3(e4m3_to_float(bits)), bits);
    }
  }

  void valuesRoundToTheNearestCodeTiesToEven() {
    QCOMPARE(float_to_e4m3(1.0625f), std::uint8_t(0x38));        // halfway 1 and 1.125: even
    QCOMPARE(float_to_e4m3(1.1875f), std::uint8_t(0x3A));        // halfway 1.125 and 1.25: even
    QCOMPARE(float_to_e4m3(1.07f), std::uint8_t(0x39));          // nearer 1.125
    QCOMPARE(float_to_e4m3(-3.3f), std::uint8_t(0xC5));          // -3.25
    QCOMPARE(float_to_e4m3(0.0009765625f), std::uint8_t(0x00));  // half the smallest: even 0
    QCOMPARE(float_to_e4m3(0.0015f), std::uint8_t(0x01));
    QCOMPARE(float_to_e4m3(1e-6f), std::uint8_t(0x00));
    QCOMPARE(float_to_e4m3(-1e-6f), std::uint8_t(0x80));
    QCOMPARE(float_to_e4m3(447.0f), std::uint8_t(0x7E));
    QCOMPARE(float_to_e4m3(420.0f), std::uint8_t(0x7D));   // nearer 416 than 448
    QCOMPARE(float_to_e4m3(440.0f), std::uint8_t(0x7E));   // nearer 448 than 416
    QCOMPARE(float_to_e4m3(1000.0f), std::uint8_t(0x7E));  // saturates
    QCOMPARE(float_to_e4m3(-INFINITY), std::uint8_t(0xFE));
    QCOMPARE(float_to_e4m3(NAN), std::uint8_t(0x7F));
  }

  // A weight whose rows hold every finite code, rotated row by row, with 300
  // inputs (whole vectors and a tail): one-hot inputs pick out single codes,
  // so each output is exactly the code's value times its row's scale, for
  // one to five decode rows, on the vector path of whatever processor runs
  // the test (and on its 256-bit kernels in the QUIRE_CPU_VECTOR_BITS=256
  // run of this suite). A NaN code, in a vector or in the tail, makes its
  // row's output NaN as the table's value would.
  void decodeProductsGiveEveryCodeItsValue() {
    constexpr std::int64_t kIn = 300;
    constexpr std::int64_t kOut = 9;
    std::vector<std::uint8_t> finite;
    for (int code = 0; code < 256; ++code) {
      if ((code & 0x7F) != 0x7F) finite.push_back(static_cast<std::uint8_t>(code));
    }
    std::vector<std::uint8_t> codes(static_cast<std::size_t>(kOut * kIn));
    std::vector<float> scales(static_cast<std::size_t>(kOut));
    for (std::int64_t n = 0; n < kOut; ++n) {
      scales[std::size_t(n)] = std::ldexp(1.0f, int(n) - 4);
      for (std::int64_t k = 0; k < kIn; ++k)
        codes[std::size_t(n * kIn + k)] = finite[std::size_t(k + 37 * n) % finite.size()];
    }
    LinearWeight weight;
    weight.in_features = kIn;
    weight.out_features = kOut;
    weight.format = Fp8Weight{codes.data(), scales.data()};
    ThreadPool pool(2);
    for (int rows = 1; rows <= 5; ++rows) {
      // Row r of the inputs picks input k = first + r.
      for (std::int64_t first = 0; first + rows <= kIn; first += rows) {
        std::vector<float> x(std::size_t(rows * kIn), 0.0f);
        for (int r = 0; r < rows; ++r)
          x[std::size_t(r * kIn + first + r)] = 1.0f;
        std::vector<float> out(std::size_t(rows * kOut));
        linear(pool, x.data(), rows, weight, out.data(), ProductRows::decode);
        for (int r = 0; r < rows; ++r) {
          for (std::int64_t n = 0; n < kOut; ++n) {
            const std::uint8_t code = codes[std::size_t(n * kIn + first + r)];
            const float want = e4m3_to_float(code) * scales[std::size_t(n)];
            const float got = out[std::size_t(r * kOut + n)];
            if (got != want) {
              QFAIL(qPrintable(QStringLiteral("%1 rows, code 0x%2 (input %3, output %4): %5, "
                                              "not %6")
                                   .arg(rows)
                                   .arg(code, 2, 16, QLatin1Char('0'))
                                   .arg(first + r)
                                   .arg(n)
                                   .arg(double(got))
                                   .arg(double(want))));
            }
          }
        }
      }
    }

    codes[std::size_t(2 * kIn + 17)] = 0x7F;
    codes[std::size_t(5 * kIn + 296)] = 0xFF;  // in the tail after 288 = 9 x 32
    const std::vector<float> ones(std::size_t(kIn), 1.0f);
    std::vector<float> out(static_cast<std::size_t>(kOut));
    linear(pool, ones.data(), 1, weight, out.data(), ProductRows::decode);
    for (std::int64_t n = 0; n < kOut; ++n)
      QCOMPARE(std::isnan(out[std::size_t(n)]), n == 2 || n == 5);
  }

  // A decode step's FP8 products give each row the bits it gets alone, for
  // any number of rows up to sixteen (whichever kernels the processor runs).
  void decodeRowsDoNotDependOnTheirNeighbours() {
    constexpr std::int64_t kIn = 328;  // ten 32-code steps and a tail
    constexpr std::int64_t kOut = 11;
    std::mt19937 rng(7);
    std::uniform_int_distribution<int> code(0, 255);
    std::vector<std::uint8_t> codes(static_cast<std::size_t>(kOut * kIn));
    for (std::uint8_t& c : codes) {
      do {
        c = static_cast<std::uint8_t>(code(rng));
      } while ((c & 0x7F) == 0x7F);
    }
    const std::vector<float> scales(static_cast<std::size_t>(kOut), 0.01f);
    LinearWeight weight;
    weight.in_features = kIn;
    weight.out_features = kOut;
    weight.format = Fp8Weight{codes.data(), scales.data()};
    std::uniform_real_distribution<float> value(-1.0f, 1.0f);
    std::vector<float> x(static_cast<std::size_t>(16 * kIn));
    for (float& v : x)
      v = value(rng);
    ThreadPool pool(2);
    std::vector<float> alone(static_cast<std::size_t>(16 * kOut));
    for (int r = 0; r < 16; ++r) {
      linear(pool, x.data() + r * kIn, 1, weight, alone.data() + r * kOut, ProductRows::decode);
    }
    for (int rows = 2; rows <= 16; ++rows) {
      std::vector<float> together(static_cast<std::size_t>(rows * kOut));
      linear(pool, x.data(), rows, weight, together.data(), ProductRows::decode);
      for (std::size_t i = 0; i < together.size(); ++i) {
        if (together[i] != alone[i]) {
          QFAIL(qPrintable(QStringLiteral("%1 rows: output %2 is %3, alone %4")
                               .arg(rows)
                               .arg(i)
                               .arg(double(together[i]), 0, 'g', 9)
                               .arg(double(alone[i]), 0, 'g', 9)));
        }
      }
    }
  }
};

QUIRE_TEST(Fp8CodecTest)
#include "test_fp8.moc"
