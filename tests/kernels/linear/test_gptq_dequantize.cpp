#include <QTest>
#include <cstdint>
#include <vector>

#include "linear_test_support.h"
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

  void rejectsImpossibleDescriptors() {
    GptqFixture fixture = hand_built(false);
    fixture.group_size = 4;  // 2 groups of 4 cannot cover 16 inputs
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, dequantize(fixture.weight()));
    fixture = hand_built(false);
    LinearWeight weight = fixture.weight();
    weight.out_features = 12;
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, dequantize(weight));
  }
};

QUIRE_TEST(GptqDequantizeTest)
#include "test_gptq_dequantize.moc"
