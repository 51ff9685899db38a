#include <QTest>
#include <bit>
#include <cmath>
#include <random>

#include "quire/kernels/cpu/fp8.h"
#include "test_main.h"

using namespace quire::kernels;

namespace {

// Independent E4M3 encoder: the nearest of the 127 non-negative finite codes
// by exhaustive search, ties to the even code, saturating at 448.
std::uint8_t reference_e4m3(float value) {
  if (std::isnan(value)) return 0x7f;
  const std::uint8_t sign = std::signbit(value) ? 0x80 : 0x00;
  const double magnitude = std::fabs(double(value));
  int best = 0;
  double best_distance = INFINITY;
  for (int code = 0; code <= 0x7e; ++code) {
    const int exponent = code >> 3, mantissa = code & 7;
    const double candidate = exponent == 0 ? mantissa * std::ldexp(1.0, -9)
                                           : std::ldexp(1.0 + mantissa / 8.0, exponent - 7);
    const double distance = std::fabs(candidate - magnitude);
    if (distance < best_distance || (distance == best_distance && (code & 1) == 0)) {
      best = code;
      best_distance = distance;
    }
  }
  return static_cast<std::uint8_t>(sign | best);
}

}  // namespace

class Fp8Test : public QObject {
  Q_OBJECT

 private slots:
  void knownCodes() {
    QCOMPARE(e4m3_to_float(0x00), 0.0f);
    QCOMPARE(e4m3_to_float(0x38), 1.0f);
    QCOMPARE(e4m3_to_float(0x7e), 448.0f);
    QCOMPARE(e4m3_to_float(0xfe), -448.0f);
    QCOMPARE(e4m3_to_float(0x08), 0.015625f);     // smallest normal, 2^-6
    QCOMPARE(e4m3_to_float(0x01), 0.001953125f);  // smallest subnormal, 2^-9
    QVERIFY(std::isnan(e4m3_to_float(0x7f)));
    QVERIFY(std::isnan(e4m3_to_float(0xff)));
  }

  void everyCodeRoundTrips() {
    for (int code = 0; code < 256; ++code) {
      if ((code & 0x7f) == 0x7f) continue;
      QCOMPARE(float_to_e4m3(e4m3_to_float(static_cast<std::uint8_t>(code))),
               static_cast<std::uint8_t>(code));
    }
  }

  void roundsToNearestEvenAndSaturates() {
    // Midpoints between neighbouring codes, and their float neighbours.
    for (int code = 0; code < 0x7e; ++code) {
      const double low = e4m3_to_float(static_cast<std::uint8_t>(code));
      const double high = e4m3_to_float(static_cast<std::uint8_t>(code + 1));
      const float mid = static_cast<float>((low + high) / 2);
      for (const float probe : {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e9f), -mid}) {
        QCOMPARE(float_to_e4m3(probe), reference_e4m3(probe));
      }
    }
    QCOMPARE(float_to_e4m3(1e6f), std::uint8_t(0x7e));
    QCOMPARE(float_to_e4m3(-INFINITY), std::uint8_t(0xfe));
    QCOMPARE(float_to_e4m3(std::nanf("")), std::uint8_t(0x7f));
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> exponent(-14.0f, 10.0f);
    for (int i = 0; i < 100000; ++i) {
      const float value = std::exp2(exponent(rng)) * ((rng() & 1) ? 1.0f : -1.0f);
      QCOMPARE(float_to_e4m3(value), reference_e4m3(value));
    }
  }
};

QUIRE_TEST(Fp8Test)
#include "test_fp8.moc"
