// EXL3 weights on the CPU: the tile order and codebooks as exllamav3 defines
// them, the state reader against the products' tile decoder, and every
// product (each width, codebook, padding and row count) against the
// double-precision dequantization.

#include <QTest>
#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

#include "exl3_decode.h"
#include "exl3_kernels.h"
#include "linear_internal.h"
#include "quire/kernels/cpu/exl3_trellis.h"
#include "quire/kernels/cpu/half.h"
#include "quire/kernels/cpu/linear.h"
#include "quire/kernels/cpu/thread_pool.h"
#include "test_main.h"

using namespace quire::kernels;
using linear_detail::exl3_wide_supported;
using linear_detail::Exl3Path;
using linear_detail::kExl3FewRows;

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

  // Inputs [rows, in]. `exact8`: rows whose rotation H(x * suh) is a whole
  // number times its 128-block's largest value / 127 (largest +-127),
  // which the integer kernels' rounding then keeps exactly: x = H(that) /
  // suh, H being its own inverse.
  std::vector<float> inputs(std::mt19937& rng, std::int64_t rows, bool exact8) const {
    std::vector<float> x(std::size_t(rows * in));
    std::uniform_real_distribution<float> value(-1.0f, 1.0f);
    if (!exact8 || in != padded_in) {
      for (float& v : x)
        v = value(rng);
      return x;
    }
    std::uniform_int_distribution<int> level(-127, 127);
    std::vector<double> rotated(static_cast<std::size_t>(in));
    for (std::int64_t r = 0; r < rows; ++r) {
      for (std::int64_t b = 0; b < in; b += 128) {
        const double scale = 0.01 * (1 + b / 128);
        for (int i = 0; i < 128; ++i)
          rotated[std::size_t(b + i)] = scale * (i == 5 ? 127 : level(rng));
        exl3_hadamard128(rotated.data() + b);
      }
      for (std::int64_t k = 0; k < in; ++k)
        x[std::size_t(r * in + k)] =
            static_cast<float>(rotated[std::size_t(k)] / half_to_float(suh[std::size_t(k)]));
    }
    return x;
  }

  // y = x W^T + bias in double: from `dense` (dequantize()) when given,
  // else from the codebook values before their FP16 rounding, as the
  // register kernels compute them (MUL1's inputs rounded to 8 bits per
  // block of 128, as theirs are).
  std::vector<double> reference(const std::vector<float>& x, std::int64_t rows,
                                const std::vector<float>* dense) const {
    std::vector<double> y(std::size_t(rows * out), 0.0);
    for (std::int64_t r = 0; r < rows; ++r) {
      if (dense != nullptr) {
        for (std::int64_t n = 0; n < out; ++n) {
          double sum = 0.0;
          for (std::int64_t k = 0; k < in; ++k)
            sum += double(x[std::size_t(r * in + k)]) * (*dense)[std::size_t(n * in + k)];
          y[std::size_t(r * out + n)] = sum;
        }
      } else {
        std::vector<double> rotated(static_cast<std::size_t>(padded_in), 0.0);
        for (std::int64_t k = 0; k < in; ++k)
          rotated[std::size_t(k)] =
              double(x[std::size_t(r * in + k)]) * half_to_float(suh[std::size_t(k)]);
        for (std::int64_t b = 0; b < padded_in; b += 128)
          exl3_hadamard128(rotated.data() + b);
        if (codebook == Exl3Codebook::mul1) round_to_8_bits(rotated);
        std::vector<double> z(static_cast<std::size_t>(padded_out), 0.0);
        const int words = 16 * bits;
        for (std::int64_t kt = 0; kt < padded_in / 16; ++kt) {
          for (std::int64_t nt = 0; nt < padded_out / 16; ++nt) {
            const std::uint16_t* tile = trellis.data() + (kt * (padded_out / 16) + nt) * words;
            for (int t = 0; t < 256; ++t) {
              const double w = unrounded_value(exl3_state(tile, bits, t));
              z[std::size_t(nt * 16 + exl3_tile_column(t))] +=
                  rotated[std::size_t(kt * 16 + exl3_tile_row(t))] * w;
            }
          }
        }
        for (std::int64_t b = 0; b < padded_out; b += 128)
          exl3_hadamard128(z.data() + b);
        for (std::int64_t n = 0; n < out; ++n)
          y[std::size_t(r * out + n)] = z[std::size_t(n)] * half_to_float(svh[std::size_t(n)]);
      }
      if (!bias.empty()) {
        for (std::int64_t n = 0; n < out; ++n)
          y[std::size_t(r * out + n)] += half_to_float(bias[std::size_t(n)]);
      }
    }
    return y;
  }

  double unrounded_value(std::uint32_t state) const {
    if (codebook == Exl3Codebook::mul1) {
      return double(exl3_mul1_scale()) * exl3_mul1_byte_sum(state) + exl3_mul1_offset();
    }
    std::uint32_t x =
        codebook == Exl3Codebook::mcg ? state * 0xCBAC1FEDu : state * 89226354u + 64248484u;
    x = (x & 0x8fff8fffu) ^ 0x3b603b60u;
    return double(half_to_float(std::uint16_t(x & 0xffff))) + half_to_float(std::uint16_t(x >> 16));
  }

  static void round_to_8_bits(std::vector<double>& rotated) {
    for (std::size_t b = 0; b < rotated.size(); b += 128) {
      double largest = 0.0;
      for (std::size_t i = b; i < b + 128; ++i)
        largest = std::max(largest, std::fabs(rotated[i]));
      const float scale = static_cast<float>(largest) / 127.0f;
      const float inverse = largest > 0.0 ? 127.0f / static_cast<float>(largest) : 0.0f;
      for (std::size_t i = b; i < b + 128; ++i)
        rotated[i] = double(scale) * std::lrintf(static_cast<float>(rotated[i]) * inverse);
    }
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

void run(ThreadPool& pool, const std::vector<float>& x, std::int64_t rows,
         const LinearWeight& weight, Exl3Path path, std::vector<float>& y,
         ProductRows kind = ProductRows::decode) {
  const linear_detail::Product product{
      x.data(), rows, weight.in_features, weight.out_features, nullptr, y.data(), nullptr, kind};
  std::vector<float> bias;
  linear_detail::Product with_bias = product;
  if (weight.bias != nullptr) {
    for (std::int64_t n = 0; n < weight.out_features; ++n)
      bias.push_back(half_to_float(static_cast<const std::uint16_t*>(weight.bias)[n]));
    with_bias.bias = bias.data();
  }
  linear_detail::exl3_product(pool, with_bias, std::get<Exl3Weight>(weight.format), path);
}

void check_close(const std::vector<float>& y, const std::vector<double>& expected, double tolerance,
                 const char* what, std::int64_t rows) {
  double largest = 0.0;
  double worst = 0.0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    largest = std::max(largest, std::fabs(expected[i]));
    worst = std::max(worst, std::fabs(expected[i] - y[i]));
  }
  QVERIFY2(largest > 0.1, "the outputs are not of order one");
  QVERIFY2(worst <= tolerance * largest, qPrintable(QStringLiteral("%1, %2 rows: off by %3 of %4")
                                                        .arg(what)
                                                        .arg(rows)
                                                        .arg(worst)
                                                        .arg(largest)));
}

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
  // The rotation against the Sylvester matrix, H[i][j] = (-1)^popcount(i & j)
  // / sqrt(128), in double; and the float transform (vectorized where the
  // processor allows) bit for bit against the butterflies in the order
  // written here, distance 1 first.
  void hadamardIsTheSylvesterMatrix() {
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> value(-4.0f, 4.0f);
    for (int trial = 0; trial < 8; ++trial) {
      std::vector<float> x(128);
      for (float& v : x)
        v = value(rng);
      std::vector<float> fast = x;
      exl3_hadamard128(fast.data());
      std::vector<float> butterflies = x;
      for (int distance = 1; distance < 128; distance *= 2) {
        for (int i = 0; i < 128; ++i) {
          if ((i & distance) != 0) continue;
          const float a = butterflies[std::size_t(i)];
          const float b = butterflies[std::size_t(i + distance)];
          butterflies[std::size_t(i)] = a + b;
          butterflies[std::size_t(i + distance)] = a - b;
        }
      }
      const auto scale = static_cast<float>(1.0 / std::sqrt(128.0));
      for (int i = 0; i < 128; ++i) {
        double expected = 0.0;
        for (int j = 0; j < 128; ++j)
          expected += (std::popcount(unsigned(i & j)) % 2 ? -1.0 : 1.0) * x[std::size_t(j)];
        expected /= std::sqrt(128.0);
        QVERIFY2(
            std::fabs(fast[std::size_t(i)] - expected) < 1e-5,
            qPrintable(QStringLiteral("output %1: %2 for %3").arg(i).arg(fast[i]).arg(expected)));
        QCOMPARE(fast[std::size_t(i)], butterflies[std::size_t(i)] * scale);
      }
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

  // The products' tile decoders -- 64-bit windows and the table, and the
  // 512-bit one that computes each value -- against the bit-by-bit reader,
  // for every width and codebook, exactly.
  void tileDecodersMatchTheBitReader() {
    std::mt19937 rng(5);
    std::uniform_int_distribution<int> word(0, 65535);
    for (const Exl3Codebook book :
         {Exl3Codebook::three_inst, Exl3Codebook::mcg, Exl3Codebook::mul1}) {
      const float* table = exl3_codebook_table(book);
      for (int bits = 1; bits <= 8; ++bits) {
        std::vector<std::uint16_t> tile(static_cast<std::size_t>(16 * bits));
        for (int trial = 0; trial < 20; ++trial) {
          for (std::uint16_t& w : tile)
            w = static_cast<std::uint16_t>(word(rng));
          float decoded[256];
          float positions[256];
          linear_detail::exl3_decode_tile(tile.data(), bits, table, decoded, 16);
          float positions_256[256];
          if (exl3_wide_supported()) {
            linear_detail::exl3_wide_decode_tile(tile.data(), bits, book, positions);
          }
          if (linear_detail::exl3_avx2_supported()) {
            linear_detail::exl3_avx2_decode_tile(tile.data(), bits, book, positions_256);
          }
          for (int t = 0; t < 256; ++t) {
            const float expected = table[exl3_state(tile.data(), bits, t)];
            QCOMPARE(decoded[exl3_tile_row(t) * 16 + exl3_tile_column(t)], expected);
            if (exl3_wide_supported()) QCOMPARE(positions[t], expected);
            if (linear_detail::exl3_avx2_supported()) QCOMPARE(positions_256[t], expected);
          }
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

  // Both product paths, for each width and codebook, with padding on both
  // sides, one row (decode) and several (a tail and a block beyond
  // kRowBlock):
  //  - the tiles, decoded to the codebook's FP16 values, equal the
  //    double-precision dequantization's products;
  //  - the kernels that decode in registers skip the FP16 rounding of the
  //    codebook (3INST, MCG: the sum of the two halves; MUL1: its affine form
  //    in the byte sum) and take MUL1's inputs in 8 bits per block of 128:
  //    they equal a reference built from those values in double precision,
  //    given inputs whose rotation is exactly 8-bit (random ones are checked
  //    within the rounding of their inputs); prompt rows take the exact
  //    values with float inputs, and equal the dequantization's products.
  void productsMatchTheirReference_data() {
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
    QTest::addRow("padded, 3 bits mcg") << 3 << int(Exl3Codebook::mcg) << 384 << 330 << true;
    QTest::addRow("padded, 5 bits 3inst")
        << 5 << int(Exl3Codebook::three_inst) << 130 << 260 << true;
  }
  void productsMatchTheirReference() {
    QFETCH(int, bits);
    QFETCH(int, codebook);
    QFETCH(int, in);
    QFETCH(int, out);
    QFETCH(bool, bias);
    std::mt19937 rng(std::uint32_t(bits * 31 + codebook * 7 + in));
    const auto book = static_cast<Exl3Codebook>(codebook);
    const Exl3Layer layer(rng, in, out, bits, book, bias);
    const LinearWeight weight = layer.weight();
    const Exl3Weight& exl3 = std::get<Exl3Weight>(weight.format);
    const std::vector<float> dense = dequantize(weight);
    ThreadPool pool(2);
    for (const std::int64_t rows : {1, 5, 131}) {
      const std::vector<float> x = layer.inputs(rng, rows, book == Exl3Codebook::mul1);
      std::vector<float> y(std::size_t(rows * out));
      run(pool, x, rows, weight, Exl3Path::tiles, y);
      check_close(y, layer.reference(x, rows, &dense), 2e-5, "tiles", rows);
      if (rows > kExl3FewRows) continue;
      if (linear_detail::exl3_avx2_supported()) {
        // The 256-bit kernels: MUL1's decode rows as the 512-bit ones, the
        // others' exact values for decode rows too.
        run(pool, x, rows, weight, Exl3Path::registers_256, y);
        check_close(
            y, layer.reference(x, rows, exl3.codebook == Exl3Codebook::mul1 ? nullptr : &dense),
            2e-5, "256-bit registers", rows);
        run(pool, x, rows, weight, Exl3Path::registers_256, y, ProductRows::prompt);
        check_close(y, layer.reference(x, rows, &dense), 2e-5, "256-bit registers, prompt rows",
                    rows);
      }
      if (!exl3_wide_supported()) continue;
      run(pool, x, rows, weight, Exl3Path::registers, y);
      check_close(y, layer.reference(x, rows, nullptr), 2e-5, "registers", rows);
      // Random inputs, rounded to 8 bits for MUL1.
      const std::vector<float> random = layer.inputs(rng, rows, false);
      run(pool, random, rows, weight, Exl3Path::registers, y);
      check_close(y, layer.reference(random, rows, nullptr),
                  exl3.codebook == Exl3Codebook::mul1 ? 0.03 : 2e-5, "registers, random inputs",
                  rows);
      // Prompt rows take the exact values and float inputs, MUL1's too.
      run(pool, random, rows, weight, Exl3Path::registers, y, ProductRows::prompt);
      check_close(y, layer.reference(random, rows, &dense), 2e-5, "registers, prompt rows", rows);
    }
  }

  // linear_many runs a layer's EXL3 products of few rows in one loop; each
  // equals its product alone, bit for bit.
  void productsTogetherEqualProductsAlone() {
    std::mt19937 rng(23);
    const Exl3Layer q(rng, 256, 256, 4, Exl3Codebook::mul1, false);
    const Exl3Layer k(rng, 256, 72, 3, Exl3Codebook::mcg, true);
    const Exl3Layer v(rng, 256, 130, 5, Exl3Codebook::three_inst, false);
    const LinearWeight weights[3] = {q.weight(), k.weight(), v.weight()};
    const LinearWeight* pointers[3] = {&weights[0], &weights[1], &weights[2]};
    ThreadPool pool(2);
    for (const std::int64_t rows : {1, 3, 16, 20}) {
      for (const ProductRows kind : {ProductRows::decode, ProductRows::prompt}) {
        const std::vector<float> x = q.inputs(rng, rows, false);
        std::vector<std::vector<float>> together(3), alone(3);
        float* outs[3];
        for (int i = 0; i < 3; ++i) {
          together[std::size_t(i)].assign(std::size_t(rows * weights[i].out_features), 0.0f);
          alone[std::size_t(i)].assign(std::size_t(rows * weights[i].out_features), 0.0f);
          outs[i] = together[std::size_t(i)].data();
          linear(pool, x.data(), rows, weights[i], alone[std::size_t(i)].data(), kind);
        }
        linear_many(pool, x.data(), rows, pointers, outs, kind);
        for (int i = 0; i < 3; ++i)
          QCOMPARE(together[std::size_t(i)], alone[std::size_t(i)]);
      }
    }
  }

  // A decode row's outputs do not depend on how many rows decode with it.
  void decodeRowsAreAloneTogether() {
    if (!exl3_wide_supported() && !linear_detail::exl3_avx2_supported()) {
      QSKIP("the processor has neither AVX-512 VBMI and VNNI nor AVX2");
    }
    for (const Exl3Codebook book : {Exl3Codebook::mul1, Exl3Codebook::mcg}) {
      std::mt19937 rng(17);
      const Exl3Layer layer(rng, 256, 256, 4, book, true);
      const LinearWeight weight = layer.weight();
      ThreadPool pool(2);
      const std::vector<float> x = layer.inputs(rng, 16, false);
      std::vector<float> alone(std::size_t(16 * 256));
      for (int r = 0; r < 16; ++r) {
        linear(pool, x.data() + r * 256, 1, weight, alone.data() + r * 256, ProductRows::decode);
      }
      for (int rows = 2; rows <= 16; rows += 3) {
        std::vector<float> together(std::size_t(rows * 256));
        linear(pool, x.data(), rows, weight, together.data(), ProductRows::decode);
        for (std::size_t i = 0; i < together.size(); ++i)
          QCOMPARE(together[i], alone[i]);
      }
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
