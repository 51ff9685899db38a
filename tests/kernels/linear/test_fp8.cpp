// The E4M3 8-bit float of FP8 checkpoints: the values of its codes as the
// OCP 8-bit float specification and PyTorch's float8_e4m3fn define them, and
// conversion to the nearest code as PyTorch's .to(torch.float8_e4m3fn)
// rounds (to nearest, ties to even) after the clamp to ±448 that FP8
// checkpoint makers apply.

#include <QTest>
#include <cmath>
#include <cstdint>

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
};

QUIRE_TEST(Fp8CodecTest)
#include "test_fp8.moc"
