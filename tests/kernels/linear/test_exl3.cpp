// EXL3 weights on the CPU: the tile order and codebooks as exllamav3 defines
// them, the state reader against the products' tile decoder, and every
// product (each width, codebook, padding and row count) against the
// double-precision dequantization.

#include <QTest>
#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

#include "exl3_decode.h"
#include "quire/kernels/cpu/exl3_trellis.h"
#include "quire/kernels/cpu/half.h"
#include "quire/kernels/cpu/linear.h"
#include "quire/kernels/cpu/thread_pool.h"
#include "test_main.h"

using namespace quire::kernels;

namespace {

// An EXL3 layer of random trellis words (any words are a valid code) with
// random signs and scales around `deviation`.
struct Exl3Layer {
  std::int64_t in = 0;
  std::int64_t out = 0;
  std::int64_t padded_in = 0;
  std::int64_t padded_out = 0;
  int bits = 4;
  Exl3Codebook codebook = Exl3Codebook::mul1;
  std::vector<std::uint16_t> trellis, suh, svh, bias;

  Exl3Layer(std::mt19937& rng, std::int64_t in_features, std::int64_t out_features, int bits_,
            Exl3Codebook codebook_, bool with_bias)
      : in(in_features),
        out(out_features),
        padded_in((in_features + 127) / 128 * 128),
        padded_out((out_features + 127) / 128 * 128),
        bits(bits_),
        codebook(codebook_) {
    std::uniform_int_distribution<int> word(0, 65535);
    std::uniform_real_distribution<float> unit(0.5f, 1.5f);
    trellis.resize(std::size_t((padded_in / 16) * (padded_out / 16) * 16 * bits));
    for (std::uint16_t& w : trellis)
      w = static_cast<std::uint16_t>(word(rng));
    const auto signs = [&](std::int64_t count, float scale) {
      std::vector<std::uint16_t> values(static_cast<std::size_t>(count));
      for (std::uint16_t& v : values)
        v = float_to_half((word(rng) & 1 ? -scale : scale) * unit(rng));
      return values;
    };
    suh = signs(padded_in, 1.0f / std::sqrt(float(in)));
    svh = signs(padded_out, 1.0f);
    if (with_bias) bias = signs(out, 0.1f);
  }

  LinearWeight weight() const {
    LinearWeight w;
    w.in_features = in;
    w.out_features = out;
    w.format =
        Exl3Weight{trellis.data(), suh.data(), svh.data(), bits, codebook, padded_in, padded_out};
    if (!bias.empty()) {
      w.bias = bias.data();
      w.bias_dtype = DType::F16;
    }
    return w;
  }
};

const char* name_of(Exl3Codebook codebook) {
  return codebook == Exl3Codebook::mul1 ? "mul1" : codebook == Exl3Codebook::mcg ? "mcg" : "3inst";
}

}  // namespace

class Exl3KernelTest : public QObject {
  Q_OBJECT

 private slots:
  // exllamav3's tensor_core_perm (exl3_lib/quantize.py), written out as its
  // loop does: position 8 t + j holds rows r0, r0 + 1, r0 + 8, r0 + 9 of
  // column t / 4, then of column t / 4 + 8, with r0 = 2 (t % 4).
  void tilePositionsAreTheTensorCoreOrder() {
    std::vector<int> seen(256, 0);
    for (int t = 0; t < 32; ++t) {
      const int r0 = (t % 4) * 2;
      const int c0 = t / 4;
      const int rows[8] = {r0, r0 + 1, r0 + 8, r0 + 9, r0, r0 + 1, r0 + 8, r0 + 9};
      for (int j = 0; j < 8; ++j) {
        const int column = j < 4 ? c0 : c0 + 8;
        QCOMPARE(exl3_tile_row(t * 8 + j), rows[j]);
        QCOMPARE(exl3_tile_column(t * 8 + j), column);
        ++seen[std::size_t(exl3_tile_row(t * 8 + j) * 16 + exl3_tile_column(t * 8 + j))];
      }
    }
    QCOMPARE(seen, std::vector<int>(256, 1));
  }

  // Values from tests/tools/reference_weights.py's exl3_codebook, which
  // follows codebook.cuh in numpy's float16 arithmetic.
  void codebookValues_data() {
    QTest::addColumn<int>("codebook");
    QTest::addColumn<int>("state");
    QTest::addColumn<int>("half");
    const auto row = [](Exl3Codebook codebook, int state, int half) {
      QTest::addRow("%s %d", name_of(codebook), state) << int(codebook) << state << half;
    };
    const int states[] = {0, 1, 2, 255, 4660, 12345, 43690, 65535};
    const int three_inst[] = {0x3a25, 0xbb5b, 0x3b74, 0x3cd1, 0xc066, 0x3c59, 0xbb35, 0xb110};
    const int mcg[] = {0x3f60, 0x304e, 0xba13, 0xbd26, 0x3e0f, 0xb682, 0xbfba, 0x3acd};
    const int mul1[] = {0xc2e8, 0x3921, 0xb72d, 0x3ab3, 0xb89e, 0xbda3, 0x39b9, 0xb936};
    for (int i = 0; i < 8; ++i) {
      row(Exl3Codebook::three_inst, states[i], three_inst[i]);
      row(Exl3Codebook::mcg, states[i], mcg[i]);
      row(Exl3Codebook::mul1, states[i], mul1[i]);
    }
  }
  void codebookValues() {
    QFETCH(int, codebook);
    QFETCH(int, state);
    QFETCH(int, half);
    const auto book = static_cast<Exl3Codebook>(codebook);
    QCOMPARE(int(exl3_codebook_half(std::uint32_t(state), book)), half);
    QCOMPARE(exl3_codebook_table(book)[state], half_to_float(std::uint16_t(half)));
  }

  // exllamav3's quantizer divides by codebook_scale = 1.24371088, the root
  // mean square of the 3INST codebook: an independent check of its values.
  void threeInstRmsIsTheQuantizersScale() {
    const float* table = exl3_codebook_table(Exl3Codebook::three_inst);
    double sum = 0.0;
    for (int s = 0; s < 65536; ++s)
      sum += double(table[s]) * table[s];
    QVERIFY(std::fabs(std::sqrt(sum / 65536.0) - 1.24371088) < 2e-6);
  }

  // MUL1's affine form: the byte sum scaled and offset lies within FP16
  // rounding of the codebook's value for every state.
  void mul1IsAffineInTheByteSum() {
    const float* table = exl3_codebook_table(Exl3Codebook::mul1);
    for (std::uint32_t s = 0; s < 65536; ++s) {
      const float affine = exl3_mul1_scale() * float(exl3_mul1_byte_sum(s)) + exl3_mul1_offset();
      QVERIFY(std::fabs(affine - table[s]) <= 0.002f);
    }
  }

  // The products' tile decoder (64-bit windows) against the bit-by-bit
  // reader, for every width.
  void tileDecoderMatchesTheBitReader() {
    std::mt19937 rng(5);
    std::uniform_int_distribution<int> word(0, 65535);
    for (int bits = 1; bits <= 8; ++bits) {
      std::vector<std::uint16_t> tile(std::size_t(16 * bits));
      for (int trial = 0; trial < 20; ++trial) {
        for (std::uint16_t& w : tile)
          w = static_cast<std::uint16_t>(word(rng));
        const float* table = exl3_codebook_table(Exl3Codebook::mcg);
        float decoded[256];
        linear_detail::exl3_decode_tile(tile.data(), bits, table, decoded, 16);
        for (int t = 0; t < 256; ++t) {
          const float expected = table[exl3_state(tile.data(), bits, t)];
          QCOMPARE(decoded[exl3_tile_row(t) * 16 + exl3_tile_column(t)], expected);
        }
      }
    }
  }

  // A state is the 16 bits ending with its position's symbol: with 4 bits,
  // position 3's state is the first four nibbles of the stream, and position
  // 0's wraps to take the last three before its own.
  void statesAreTheBitsEndingAtTheirSymbol() {
    std::vector<std::uint16_t> tile(64, 0);
    // Stream words (32 bits, most significant first) are stored low half first.
    tile[0] = 0x5678;   // stream bits 16..31
    tile[1] = 0x1234;   // stream bits 0..15
    tile[62] = 0xabcd;  // the last 16 stream bits (the low half of the last word)
    QCOMPARE(exl3_state(tile.data(), 4, 3), 0x1234u);
    QCOMPARE(exl3_state(tile.data(), 4, 4), 0x2345u);
    QCOMPARE(exl3_state(tile.data(), 4, 7), 0x5678u);
    QCOMPARE(exl3_state(tile.data(), 4, 0), 0xbcd1u);
    QCOMPARE(exl3_state(tile.data(), 4, 255), 0xabcdu);
  }

  // Every product equals the double-precision dequantization's, for each
  // width and codebook, with padding on both sides, one row (decode) and
  // several (a tail and a block beyond kRowBlock).
  void productsMatchTheDequantizedWeight_data() {
    QTest::addColumn<int>("bits");
    QTest::addColumn<int>("codebook");
    QTest::addColumn<int>("in");
    QTest::addColumn<int>("out");
    QTest::addColumn<bool>("bias");
    for (int bits = 1; bits <= 8; ++bits) {
      for (const Exl3Codebook codebook :
           {Exl3Codebook::three_inst, Exl3Codebook::mcg, Exl3Codebook::mul1}) {
        QTest::addRow("%d bits %s", bits, name_of(codebook))
            << bits << int(codebook) << 256 << 128 << false;
      }
    }
    QTest::addRow("padded inputs and outputs") << 4 << int(Exl3Codebook::mul1) << 200 << 72 << true;
    QTest::addRow("padded outputs, 3 bits") << 3 << int(Exl3Codebook::mcg) << 384 << 330 << true;
  }
  void productsMatchTheDequantizedWeight() {
    QFETCH(int, bits);
    QFETCH(int, codebook);
    QFETCH(int, in);
    QFETCH(int, out);
    QFETCH(bool, bias);
    std::mt19937 rng(std::uint32_t(bits * 31 + codebook * 7 + in));
    const Exl3Layer layer(rng, in, out, bits, static_cast<Exl3Codebook>(codebook), bias);
    const LinearWeight weight = layer.weight();
    const std::vector<float> dense = dequantize(weight);
    ThreadPool pool(2);
    std::uniform_real_distribution<float> value(-1.0f, 1.0f);
    for (const std::int64_t rows : {1, 5, 131}) {
      std::vector<float> x(std::size_t(rows * in));
      for (float& v : x)
        v = value(rng);
      std::vector<float> y(std::size_t(rows * out));
      linear(pool, x.data(), rows, weight, y.data(),
             rows == 1 ? ProductRows::decode : ProductRows::prompt);
      double largest = 0.0;
      double worst = 0.0;
      for (std::int64_t r = 0; r < rows; ++r) {
        for (std::int64_t n = 0; n < out; ++n) {
          double expected = bias ? half_to_float(layer.bias[std::size_t(n)]) : 0.0;
          for (std::int64_t k = 0; k < in; ++k)
            expected += double(x[std::size_t(r * in + k)]) * dense[std::size_t(n * in + k)];
          largest = std::max(largest, std::fabs(expected));
          worst = std::max(worst, std::fabs(expected - y[std::size_t(r * out + n)]));
        }
      }
      QVERIFY2(largest > 0.1, "the outputs are not of order one");
      QVERIFY2(
          worst <= 2e-5 * largest,
          qPrintable(QStringLiteral("%1 rows: off by %2 of %3").arg(rows).arg(worst).arg(largest)));
    }
  }

  // Descriptors the shared checks refuse: a width beyond 8 bits, padding
  // that is not K rounded up to 128, a missing tensor.
  void descriptorsThatCannotBeRightAreRefused() {
    std::mt19937 rng(3);
    const Exl3Layer layer(rng, 128, 128, 4, Exl3Codebook::mul1, false);
    LinearWeight weight = layer.weight();
    std::get<Exl3Weight>(weight.format).bits = 9;
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, dequantize(weight));
    weight = layer.weight();
    std::get<Exl3Weight>(weight.format).padded_in = 256;
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, dequantize(weight));
    weight = layer.weight();
    std::get<Exl3Weight>(weight.format).svh = nullptr;
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, dequantize(weight));
  }
};

QUIRE_TEST(Exl3KernelTest)
#include "test_exl3.moc"
