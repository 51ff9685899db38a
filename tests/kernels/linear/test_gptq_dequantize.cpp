#include <QTest>
#include <cstdint>
#include <vector>

#include "linear_test_support.h"
#include "quire/kernels/cpu/half.h"
#include "quire/kernels/cpu/linear.h"
#include "test_main.h"

using namespace quire::kernels;
using quire::test::GptqFixture;

namespace {

// 16 inputs, 8 outputs, two groups of 8. Every column stores q[k] = k; group 0
// stores zero n for column n, group 1 stores 3; scales 0.5 and 0.25.
GptqFixture hand_built(bool exact_zeros) {
  GptqFixture fixture;
  fixture.in_features = 16;
  fixture.out_features = 8;
  fixture.group_size = 8;
  fixture.groups = 2;
  fixture.exact_zeros = exact_zeros;
  fixture.qweight.assign(8, 0x76543210u);       // rows 0-7, low nibble first
  fixture.qweight.resize(16, 0xfedcba98u);      // rows 8-15
  fixture.qzeros = {0x76543210u, 0x33333333u};  // [group, column / 8]
  fixture.scales.assign(8, 0x3800u);            // 0.5
  fixture.scales.resize(16, 0x3400u);           // 0.25
  return fixture;
}

}  // namespace

class GptqDequantizeTest : public QObject {
  Q_OBJECT

 private slots:
  // v1 checkpoints store the zero point minus one: w = (q - (z + 1)) * s.
  void version1ZerosAreStoredMinusOne() {
    const std::vector<float> dense = dequantize(hand_built(false).weight());
    for (int n = 0; n < 8; ++n) {
      for (int k = 0; k < 8; ++k)
        QCOMPARE(dense[std::size_t(n * 16 + k)], float(k - n - 1) * 0.5f);
      for (int k = 8; k < 16; ++k)
        QCOMPARE(dense[std::size_t(n * 16 + k)], float(k - 4) * 0.25f);
    }
  }

  // gptq_v2 checkpoints store it exactly: w = (q - z) * s.
  void version2ZerosAreExact() {
    const std::vector<float> dense = dequantize(hand_built(true).weight());
    for (int n = 0; n < 8; ++n) {
      for (int k = 0; k < 8; ++k)
        QCOMPARE(dense[std::size_t(n * 16 + k)], float(k - n) * 0.5f);
      for (int k = 8; k < 16; ++k)
        QCOMPARE(dense[std::size_t(n * 16 + k)], float(k - 3) * 0.25f);
    }
  }

  // Act-order: g_idx assigns even inputs to group 0 and odd ones to group 1.
  void actOrderTakesEachRowsGroup() {
    GptqFixture fixture = hand_built(true);
    for (int k = 0; k < 16; ++k)
      fixture.g_idx.push_back(k % 2);
    const std::vector<float> dense = dequantize(fixture.weight());
    for (int n = 0; n < 8; ++n) {
      for (int k = 0; k < 16; ++k) {
        const float expected = k % 2 == 0 ? float(k - n) * 0.5f : float(k - 3) * 0.25f;
        QCOMPARE(dense[std::size_t(n * 16 + k)], expected);
      }
    }
  }

  void trivialGroupIndexMatchesNone() {
    GptqFixture fixture = hand_built(false);
    const std::vector<float> without = dequantize(fixture.weight());
    for (int k = 0; k < 16; ++k)
      fixture.g_idx.push_back(k / 8);
    QCOMPARE(dequantize(fixture.weight()), without);
  }

  // 8 bits: four values to a word, the first in the low byte; zero points
  // likewise along the columns. Here q[k, n] = 10k + n and column n's
  // (exact) zero point 100 + n, so every weight of row k is (10k - 100) / 2.
  void eightBitValuesRunFromTheLowByte() {
    GptqFixture fixture;
    fixture.in_features = 8;
    fixture.out_features = 8;
    fixture.group_size = 8;
    fixture.groups = 1;
    fixture.exact_zeros = true;
    fixture.bits = 8;
    for (std::uint32_t word_row = 0; word_row < 2; ++word_row) {
      for (std::uint32_t n = 0; n < 8; ++n) {
        std::uint32_t word = 0;
        for (std::uint32_t j = 0; j < 4; ++j)
          word |= (10 * (4 * word_row + j) + n) << (8 * j);
        fixture.qweight.push_back(word);
      }
    }
    fixture.qzeros = {0x67666564u, 0x6b6a6968u};  // 100..107
    fixture.scales.assign(8, 0x3800u);            // 0.5
    const std::vector<float> dense = dequantize(fixture.weight());
    for (int n = 0; n < 8; ++n) {
      for (int k = 0; k < 8; ++k)
        QCOMPARE(dense[std::size_t(n * 8 + k)], float(10 * k - 100) * 0.5f);
    }
  }

  // Symmetric weights store no zero points: their unsigned values carry an
  // offset of 2^(bits - 1), 8 for 4 bits and 128 for 8. Scales may be BF16
  // or F32 as well as FP16.
  void symmetricWeightsCenterOnTheMidpoint_data() {
    QTest::addColumn<int>("bits");
    QTest::addColumn<int>("scaleType");
    QTest::newRow("4 bits, BF16 scales") << 4 << int(DType::BF16);
    QTest::newRow("8 bits, F32 scales") << 8 << int(DType::F32);
    QTest::newRow("8 bits, F16 scales") << 8 << int(DType::F16);
  }

  void symmetricWeightsCenterOnTheMidpoint() {
    QFETCH(int, bits);
    QFETCH(int, scaleType);
    GptqFixture fixture;
    fixture.in_features = 8;
    fixture.out_features = 8;
    fixture.group_size = 8;
    fixture.groups = 1;
    fixture.bits = bits;
    fixture.scale_dtype = DType(scaleType);
    // Every value of every column is the same: 3 (4 bits) or 200 (8 bits).
    const std::uint32_t word = bits == 4 ? 0x33333333u : 0xc8c8c8c8u;
    fixture.qweight.assign(std::size_t(8 * bits / 32 * 8), word);
    // Column n's scale is (n + 1) / 4, exact in every dtype.
    for (int n = 0; n < 8; ++n) {
      const float scale = float(n + 1) / 4.0f;
      fixture.scales32.push_back(scale);
      fixture.scales.push_back(fixture.scale_dtype == DType::BF16 ? float_to_bf16(scale)
                                                                  : float_to_half(scale));
    }
    const float centered = bits == 4 ? 3.0f - 8.0f : 200.0f - 128.0f;
    const std::vector<float> dense = dequantize(fixture.weight());
    for (int n = 0; n < 8; ++n) {
      for (int k = 0; k < 8; ++k)
        QCOMPARE(dense[std::size_t(n * 8 + k)], centered * float(n + 1) / 4.0f);
    }
  }

  void rejectsImpossibleDescriptors() {
    GptqFixture fixture = hand_built(false);
    fixture.group_size = 4;  // 2 groups of 4 cannot cover 16 inputs
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, dequantize(fixture.weight()));
    fixture = hand_built(false);
    LinearWeight weight = fixture.weight();
    weight.out_features = 12;
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, dequantize(weight));
    fixture = hand_built(false);
    fixture.bits = 3;
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, dequantize(fixture.weight()));
    fixture = hand_built(false);
    fixture.scale_dtype = DType::I32;
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, dequantize(fixture.weight()));
  }
};

QUIRE_TEST(GptqDequantizeTest)
#include "test_gptq_dequantize.moc"
