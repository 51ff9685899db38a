#include <QTest>
#include <cstdint>
#include <map>
#include <random>
#include <vector>

#include "linear_test_support.h"
#include "quire/kernels/cpu/half.h"
#include "quire/kernels/cpu/linear.h"
#include "test_main.h"

using namespace quire::kernels;
using quire::test::Exl2Fixture;

namespace {

// 32 stored values, zero except those listed.
QList<int> sparse_values(std::initializer_list<std::pair<const int, int>> listed) {
  const std::map<int, int> values(listed);
  QList<int> out(32, 0);
  for (const auto& [row, value] : values)
    out[row] = value;
  return out;
}

}  // namespace

class Exl2DequantizeTest : public QObject {
  Q_OBJECT

 private slots:
  // One 32-row group of every width; the words of each column were worked out
  // by hand from the layout "value j at bits [j*b, (j+1)*b) of the stream",
  // including values that straddle two words at 3, 5 and 6 bits.
  void eachWidthReadsItsBitStream_data() {
    QTest::addColumn<int>("bits");
    QTest::addColumn<QList<quint32>>("words");
    QTest::addColumn<QList<int>>("values");
    QTest::newRow("2 bits") << 2 << QList<quint32>{0x00000001u, 0x8000000cu}
                            << sparse_values({{0, 1}, {17, 3}, {31, 2}});
    // Value 10 = 0b101: bits 30-31 of word 0 hold 01, bit 0 of word 1 holds 1.
    // Value 21 = 0b110 at bits 63-65: 0 in word 1's top bit, 11 in word 2.
    QTest::newRow("3 bits") << 3 << QList<quint32>{0x40000018u, 0x00000001u, 0xe0000003u}
                            << sparse_values({{1, 3}, {10, 5}, {21, 6}, {31, 7}});
    QTest::newRow("4 bits") << 4 << QList<quint32>{0x0000000fu, 0x000000a0u, 0u, 0x30000000u}
                            << sparse_values({{0, 15}, {9, 10}, {31, 3}});
    // Value 6 = 0b10110 at bits 30-34; value 12 = 31 at bits 60-64; value 25 =
    // 0b10001 at bits 125-129.
    QTest::newRow("5 bits") << 5
                            << QList<quint32>{0x80000000u, 0xf0000005u, 0x00000001u, 0x20000000u,
                                              0x48000002u}
                            << sparse_values({{6, 22}, {12, 31}, {25, 17}, {31, 9}});
    // Value 5 = 0b101101 at bits 30-35; value 10 = 63 at bits 60-65.
    QTest::newRow("6 bits") << 6 << QList<quint32>{0x40000000u, 0xf000000bu, 0x00000003u,
                                                   0x00000001u, 0u,          0x80000000u}
                            << sparse_values({{5, 45}, {10, 63}, {16, 1}, {31, 32}});
    QTest::newRow("8 bits") << 8 << QList<quint32>{0x00000081u, 0x00c80000u, 0u, 0u,
                                                   0u,          0u,          0u, 0xff000000u}
                            << sparse_values({{0, 129}, {6, 200}, {31, 255}});
  }

  void eachWidthReadsItsBitStream() {
    QFETCH(int, bits);
    QFETCH(QList<quint32>, words);
    QFETCH(QList<int>, values);
    QCOMPARE(words.size(), qsizetype(bits));
    Exl2Fixture fixture({{bits, 32}}, 8, 8);
    for (int w = 0; w < bits; ++w) {
      for (int n = 0; n < 8; ++n)
        fixture.q_weight[std::size_t(w * 8 + n)] = words[w];
    }
    fixture.q_scale[0] = 0x76543210u;  // column n: qs = n + 1
    fixture.q_scale_max[0] = 0x3800u;  // 0.5
    const std::vector<float> dense = dequantize(fixture.weight());
    for (int n = 0; n < 8; ++n) {
      const float scale = float((n + 1) * (n + 1)) * 0.5f / 256.0f;
      for (int k = 0; k < 32; ++k) {
        QCOMPARE(dense[std::size_t(n * 32 + k)], float(values[k] - (1 << (bits - 1))) * scale);
      }
    }
  }

  // s = qs^2 * q_scale_max / 256 with qs - 1 in the nibble of the column.
  void scalesFollowTheSquareLaw() {
    Exl2Fixture fixture({{4, 32}}, 8, 8);
    for (int w = 0; w < 4; ++w) {
      for (int n = 0; n < 8; ++n)
        fixture.q_weight[std::size_t(w * 8 + n)] = 0xffffffffu;
    }
    fixture.q_scale[0] = 0xfedcba98u;  // qs = 9 ... 16
    fixture.q_scale_max[0] = 0x4200u;  // 3.0
    // (15 - 8) * qs^2 * 3 / 256 = qs^2 * 21 / 256
    const float expected[8] = {6.64453125f,  8.203125f,  9.92578125f,  11.8125f,
                               13.86328125f, 16.078125f, 18.45703125f, 21.0f};
    const std::vector<float> dense = dequantize(fixture.weight());
    for (int n = 0; n < 8; ++n) {
      for (int k = 0; k < 32; ++k)
        QCOMPARE(dense[std::size_t(n * 32 + k)], expected[n]);
    }
  }

  // perm[k] = 31 - k: quantized row k is input 31 - k.
  void permutationPlacesRowsAtTheirInputs() {
    Exl2Fixture fixture({{4, 32}}, 8, 8);
    const std::uint32_t words[4] = {0x76543210u, 0xfedcba98u, 0x76543210u, 0xfedcba98u};
    for (int w = 0; w < 4; ++w) {
      for (int n = 0; n < 8; ++n)
        fixture.q_weight[std::size_t(w * 8 + n)] = words[w];
    }
    for (int k = 0; k < 32; ++k)
      fixture.perm[std::size_t(k)] = 31 - k;
    fixture.q_scale_max[0] = float_to_half(256.0f);  // qs = 1: s = 1
    const std::vector<float> dense = dequantize(fixture.weight());
    for (int n = 0; n < 8; ++n) {
      for (int k = 0; k < 32; ++k) {
        QCOMPARE(dense[std::size_t(n * 32 + (31 - k))], float(k % 16 - 8));
      }
    }
  }

  // Groups of 8, 6, 5, 4, 3 and 2 bits (a 16-row 2-bit group last) in one
  // layer with a shuffled permutation, against the fixture's own decoder.
  void mixedWidthLayerWithPermutation() {
    std::mt19937 rng(7);
    const Exl2Fixture fixture = quire::test::random_exl2(
        rng, {{8, 32}, {6, 64}, {6, 16}, {5, 32}, {4, 128}, {3, 32}, {2, 16}}, 16, 16, true);
    QCOMPARE(fixture.in_features, std::int64_t(320));
    QCOMPARE(fixture.q_weight.size(), std::size_t((8 + 12 + 3 + 5 + 16 + 3 + 1) * 16));
    const std::vector<float> dense = dequantize(fixture.weight());
    for (std::size_t g = 0; g < fixture.groups.size(); ++g) {
      const Exl2Group& group = fixture.groups[g];
      for (std::int64_t n = 0; n < 16; ++n) {
        for (int j = 0; j < group.rows; ++j) {
          const std::int64_t k = group.first_row + j;
          const float expected =
              float(fixture.value(k, n) - (1 << (group.bits - 1))) * fixture.scale(g, n);
          QCOMPARE(dense[std::size_t(n * 320 + fixture.perm[std::size_t(k)])], expected);
        }
      }
    }
  }

  // A converter-padded layer: 20 outputs stored in 32 columns.
  void paddedColumnsAreSkipped() {
    std::mt19937 rng(11);
    const Exl2Fixture fixture = quire::test::random_exl2(rng, {{4, 64}}, 20, 32, false);
    const std::vector<float> dense = dequantize(fixture.weight());
    QCOMPARE(dense.size(), std::size_t(20 * 64));
    for (std::int64_t n = 0; n < 20; ++n) {
      for (std::int64_t k = 0; k < 64; ++k) {
        QCOMPARE(dense[std::size_t(n * 64 + k)],
                 float(fixture.value(k, n) - 8) * fixture.scale(0, n));
      }
    }
  }

  void rejectsImpossibleDescriptors() {
    Exl2Fixture fixture({{4, 32}, {3, 32}}, 8, 8);
    LinearWeight weight = fixture.weight();
    weight.in_features = 96;  // groups cover 64
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, dequantize(weight));
    weight = fixture.weight();
    std::get<Exl2Weight>(weight.format).groups[1].bits = 7;
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, dequantize(weight));
    weight = fixture.weight();
    std::get<Exl2Weight>(weight.format).groups[1].q_row = 5;
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, dequantize(weight));
    weight = fixture.weight();
    std::get<Exl2Weight>(weight.format).groups[1].rows = 8;  // 24 bits: not whole words
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, dequantize(weight));
  }
};

QUIRE_TEST(Exl2DequantizeTest)
#include "test_exl2_dequantize.moc"
