#include <QTest>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <variant>
#include <vector>

#include "linear_internal.h"
#include "linear_test_support.h"
#include "quire/kernels/cpu/half.h"
#include "quire/kernels/cpu/linear.h"
#include "test_main.h"

using namespace quire::kernels;
using namespace quire::test;

namespace {

// Dense layers: 37 outputs of 300 inputs (neither a multiple of the vector
// lanes). EXL2: 104 outputs (three 32-column tiles and one of 8) over 320
// inputs in groups of every width; "padded" stores 100 outputs in 128 columns.
// GPTQ: 104 outputs over 256 inputs, or 320 inputs in groups of 128 (the last
// one partial); 8-bit, and symmetric (no zero points) with BF16 or F32 scales
// as the repacked compressed-tensors weights hold them. FP8: 104 outputs over 300 inputs, a scale
// per row or one for all.
std::unique_ptr<Layer> make_layer(const QByteArray& format, std::mt19937& rng) {
  auto layer = std::make_unique<Layer>();
  const std::vector<std::pair<int, int>> mixed = {{8, 32},  {6, 64}, {6, 16}, {5, 32},
                                                  {4, 128}, {3, 32}, {2, 16}};
  if (format.startsWith("dense")) {
    const std::int64_t out = 37;
    const std::int64_t in = 300;
    const std::vector<float> values = random_inputs(rng, std::size_t(out * in));
    DenseWeight dense;
    if (format == "dense-f32") {
      layer->floats = values;
      dense = {layer->floats.data(), DType::F32};
    } else {
      const bool bf16 = format == "dense-bf16";
      for (const float v : values)
        layer->halves.push_back(bf16 ? float_to_bf16(v) : float_to_half(v));
      dense = {layer->halves.data(), bf16 ? DType::BF16 : DType::F16};
    }
    layer->weight.in_features = in;
    layer->weight.out_features = out;
    layer->weight.format = dense;
  } else if (format == "exl2-mixed") {
    layer->exl2 = random_exl2(rng, mixed, 104, 104, false);
  } else if (format == "exl2-permuted") {
    layer->exl2 = random_exl2(rng, mixed, 104, 104, true);
  } else if (format == "exl2-long-groups") {
    // Groups longer than the integer kernel's 512-row chunks.
    layer->exl2 = random_exl2(rng, {{8, 544}, {4, 1056}, {2, 64}, {3, 32}}, 40, 40, true);
  } else if (format == "exl2-padded") {
    layer->exl2 = random_exl2(rng, {{5, 64}, {4, 96}}, 100, 128, true);
  } else if (format == "gptq-v1") {
    layer->gptq = random_gptq(rng, 256, 104, 32, false, false);
  } else if (format == "gptq-v2") {
    layer->gptq = random_gptq(rng, 256, 104, 32, false, true);
  } else if (format == "gptq-act-order") {
    layer->gptq = random_gptq(rng, 256, 104, 32, true, false);
  } else if (format == "gptq-partial-group") {
    layer->gptq = random_gptq(rng, 320, 104, 128, true, true);
  } else if (format == "gptq8-v1") {
    layer->gptq = random_gptq(rng, 256, 104, 32, false, false, {8, false, DType::F16});
  } else if (format == "gptq8-act-order") {
    layer->gptq = random_gptq(rng, 256, 104, 64, true, true, {8, false, DType::F16});
  } else if (format == "int4-sym-bf16") {
    // compressed-tensors' symmetric W4A16, repacked: no zero points, BF16 scales.
    layer->gptq = random_gptq(rng, 256, 104, 128, false, true, {4, true, DType::BF16});
  } else if (format == "int8-sym-f32") {
    layer->gptq = random_gptq(rng, 320, 104, 320, false, true, {8, true, DType::F32});
  } else if (format.startsWith("fp8")) {
    make_fp8_layer(*layer, rng, 104, 300, format == "fp8-channel");
  }
  if (layer->exl2) layer->weight = layer->exl2->weight();
  if (layer->gptq) layer->weight = layer->gptq->weight();
  return layer;
}

const QByteArrayList kFormats = {
    "dense-f16",      "dense-bf16",         "dense-f32",   "exl2-mixed",
    "exl2-permuted",  "exl2-padded",        "gptq-v1",     "gptq-v2",
    "gptq-act-order", "gptq-partial-group", "gptq8-v1",    "gptq8-act-order",
    "int4-sym-bf16",  "int8-sym-f32",       "fp8-channel", "fp8-tensor"};

using linear_detail::Exl2RowPath;

// The extra error the integer EXL2 kernel may add (linear_exl2_integer.cpp):
// each input is off by at most 1/65534 (16-bit inputs) or 1/254 (8-bit
// inputs, the whole 32-row blocks of 2- and 4-bit groups) of the largest
// magnitude in its group, so output n by at most the sum of those errors
// times |w_nk|. Zero for the float path and every other product.
std::vector<double> integer_input_slack(const Layer& layer, const std::vector<float>& x,
                                        std::int64_t rows, Exl2RowPath path) {
  const LinearWeight& weight = layer.weight;
  std::vector<double> slack(std::size_t(rows * weight.out_features), 0.0);
  if (!layer.exl2 || path == Exl2RowPath::float_inputs) return slack;
  const std::vector<float> dense = dequantize(weight);
  const std::int64_t in = weight.in_features;
  for (std::int64_t r = 0; r < rows; ++r) {
    std::vector<double> input_error(static_cast<std::size_t>(in));
    for (const Exl2Group& group : layer.exl2->groups) {
      const bool int8_path =
          path == Exl2RowPath::int8_inputs || path == Exl2RowPath::int8_inputs_256;
      const bool int8 = int8_path && (group.bits == 2 || group.bits == 4);
      double largest = 0.0;
      for (int k = group.first_row; k < group.first_row + group.rows; ++k)
        largest = std::max(
            largest, std::fabs(double(x[std::size_t(r * in + layer.exl2->perm[std::size_t(k)])])));
      for (int k = group.first_row; k < group.first_row + group.rows; ++k)
        input_error[std::size_t(layer.exl2->perm[std::size_t(k)])] =
            largest / (int8 ? 254.0 : 65534.0);
    }
    for (std::int64_t n = 0; n < weight.out_features; ++n) {
      double sum = 0.0;
      for (std::int64_t k = 0; k < in; ++k)
        sum += input_error[std::size_t(k)] * std::fabs(double(dense[std::size_t(n * in + k)]));
      slack[std::size_t(r * weight.out_features + n)] = sum;
    }
  }
  return slack;
}

const char* path_name(Exl2RowPath path) {
  switch (path) {
    case Exl2RowPath::float_inputs:
      return "float";
    case Exl2RowPath::int16_inputs:
      return "int16";
    case Exl2RowPath::int8_inputs:
      return "int8";
    case Exl2RowPath::int8_inputs_256:
      return "int8 256-bit";
    case Exl2RowPath::fastest:
      break;
  }
  return "fastest";
}

// out against the reference: within 1e-5 of the magnitude (FP32 rounding)
// plus the slack of the path.
void expect_near_reference(const std::vector<float>& out, const Reference& reference,
                           const std::vector<double>& slack) {
  for (std::size_t i = 0; i < out.size(); ++i) {
    const double error = std::fabs(double(out[i]) - reference.values[i]);
    if (!(error <= 1e-5 * reference.magnitudes[i] + slack[i])) {
      QFAIL(qPrintable(QString("output %1: %2, expected %3 (error %4 of magnitude %5, slack %6)")
                           .arg(i)
                           .arg(double(out[i]), 0, 'g', 9)
                           .arg(reference.values[i], 0, 'g', 9)
                           .arg(error)
                           .arg(reference.magnitudes[i])
                           .arg(slack[i])));
    }
  }
}

// The inputs of an EXL2 product in quantized order, as exl2_product gathers them.
std::vector<float> permuted_inputs(const Exl2Fixture& exl2, const std::vector<float>& x,
                                   std::int64_t rows) {
  std::vector<float> xp(x.size());
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t k = 0; k < exl2.in_features; ++k)
      xp[std::size_t(r * exl2.in_features + k)] =
          x[std::size_t(r * exl2.in_features + exl2.perm[std::size_t(k)])];
  }
  return xp;
}

// Products of 2 to limit + 1 input rows of `format`, of whose rows `kind`
// says: up to `limit` rows each row's outputs are the bits it gets alone;
// above it they are not (the batched product sums in another order).
void expect_rows_as_alone(const char* format, std::int64_t limit, ProductRows kind,
                          std::mt19937& rng) {
  ThreadPool pool(3);  // as the tests' own pool
  const std::unique_ptr<Layer> layer = make_layer(format, rng);
  const std::int64_t in = layer->weight.in_features;
  const std::int64_t out = layer->weight.out_features;
  for (std::int64_t rows = 2; rows <= limit + 1; ++rows) {
    const std::vector<float> x = random_inputs(rng, std::size_t(rows * in));
    std::vector<float> together(std::size_t(rows * out), std::nanf(""));
    linear(pool, x.data(), rows, layer->weight, together.data(), kind);
    for (std::int64_t r = 0; r < rows; ++r) {
      std::vector<float> alone(std::size_t(out), std::nanf(""));
      linear(pool, x.data() + r * in, 1, layer->weight, alone.data(), kind);
      const std::vector<float> row(together.begin() + r * out, together.begin() + (r + 1) * out);
      const QString where =
          QStringLiteral("%1, %2 rows, row %3").arg(QLatin1String(format)).arg(rows).arg(r);
      if (rows <= limit) {
        QVERIFY2(row == alone, qPrintable(where));
      } else {
        QVERIFY2(row != alone, qPrintable(where));
      }
    }
  }
}

}  // namespace

class LinearProductTest : public QObject {
  Q_OBJECT

  // Three threads, so that the work is split even on a small machine.
  ThreadPool pool_{3};

 private slots:
  // linear() against a double-precision product over dequantize(). FP32
  // accumulation: every output must lie within 1e-5 of sum_k |x_k w_nk| + |b_n|
  // of the exact value (K <= 320 terms, each rounded at most a few times).
  void matchesTheDequantizedProduct_data() {
    QTest::addColumn<QByteArray>("format");
    QTest::addColumn<QByteArray>("bias");
    QTest::addColumn<int>("rows");
    for (const QByteArray& format : kFormats) {
      for (const char* bias : {"none", "f16", "bf16", "f32"}) {
        for (const int rows : {1, 2, 3, 4, 7, 9, 13}) {
          QTest::addRow("%s, bias %s, %d rows", format.constData(), bias, rows)
              << format << QByteArray(bias) << rows;
        }
      }
      // Batched products work in blocks of kRowBlock rows: one partial block,
      // one full block and a last block of a single row, three blocks.
      for (const int rows :
           {70, int(linear_detail::kRowBlock) + 1, int(2 * linear_detail::kRowBlock) + 9}) {
        QTest::addRow("%s, bias f16, %d rows", format.constData(), rows)
            << format << QByteArray("f16") << rows;
      }
    }
  }

  void matchesTheDequantizedProduct() {
    QFETCH(QByteArray, format);
    QFETCH(QByteArray, bias);
    QFETCH(int, rows);
    std::mt19937 rng(static_cast<unsigned>(qHash(format) ^ qHash(bias) ^ unsigned(rows)));
    const std::unique_ptr<Layer> layer = make_layer(format, rng);
    add_bias(*layer, bias, rng);
    const LinearWeight& weight = layer->weight;
    const std::vector<float> x = random_inputs(rng, std::size_t(rows * weight.in_features));
    std::vector<float> out(std::size_t(rows * weight.out_features), std::nanf(""));
    linear(pool_, x.data(), rows, weight, out.data());
    const Reference reference = reference_product(x, rows, dequantize(weight), weight.out_features,
                                                  weight.in_features, layer->bias);
    // linear() of prompt rows takes the fastest path: 16-bit inputs for
    // EXL2 weights where the processor has AVX-512 VNNI (the few-row kernel,
    // and the integer tiles above that where they run), float elsewhere.
    Exl2RowPath path = Exl2RowPath::float_inputs;
    if (rows <= linear_detail::kExl2FewRows) {
      if (linear_detail::exl2_integer_supported() && wide_vnni_allowed())
        path = Exl2RowPath::int16_inputs;
    } else if (const auto* exl2 = std::get_if<Exl2Weight>(&weight.format);
               exl2 && linear_detail::exl2_batched_integer_supported() &&
               linear_detail::exl2_batched_integer_takes(*exl2)) {
      path = Exl2RowPath::int16_inputs;
    }
    expect_near_reference(out, reference, integer_input_slack(*layer, x, rows, path));
  }

  // Every kernel of EXL2 decode steps: the float one, and the integer ones
  // with 16- and 8-bit inputs where the processor has AVX2 (8-bit ones both
  // with 256-bit registers and, where the processor has AVX-512BW, 512-bit).
  void exl2FewRowPathsMatchTheDequantizedProduct_data() {
    QTest::addColumn<QByteArray>("format");
    QTest::addColumn<int>("path_index");
    QTest::addColumn<int>("rows");
    for (const char* format : {"exl2-mixed", "exl2-permuted", "exl2-padded", "exl2-long-groups"}) {
      for (const Exl2RowPath path : {Exl2RowPath::float_inputs, Exl2RowPath::int16_inputs,
                                     Exl2RowPath::int8_inputs, Exl2RowPath::int8_inputs_256}) {
        for (int rows = 1; rows <= linear_detail::kExl2FewRows; ++rows) {
          QTest::addRow("%s, %s, %d rows", format, path_name(path), rows)
              << QByteArray(format) << int(path) << rows;
        }
      }
    }
  }

  void exl2FewRowPathsMatchTheDequantizedProduct() {
    QFETCH(QByteArray, format);
    QFETCH(int, path_index);
    QFETCH(int, rows);
    const auto path = static_cast<Exl2RowPath>(path_index);
    if (path != Exl2RowPath::float_inputs && !linear_detail::exl2_integer_supported())
      QSKIP("the processor lacks AVX2");
    std::mt19937 rng(
        static_cast<unsigned>(qHash(format) ^ unsigned(rows) ^ (unsigned(path_index) * 77u)));
    const std::unique_ptr<Layer> layer = make_layer(format, rng);
    const LinearWeight& weight = layer->weight;
    const std::vector<float> x = random_inputs(rng, std::size_t(rows * weight.in_features));
    // The product's slices gather the inputs into quantized order, each its
    // own groups' part: together every input.
    std::vector<float> xp(x.size(), std::nanf(""));
    std::vector<float> out(std::size_t(rows * weight.out_features), std::nanf(""));
    const linear_detail::Product product{
        x.data(), rows, weight.in_features, weight.out_features, nullptr, out.data()};
    linear_detail::exl2_few_rows_product(pool_, product, std::get<Exl2Weight>(weight.format),
                                         layer->exl2->q_columns, xp.data(), path);
    QCOMPARE(xp, permuted_inputs(*layer->exl2, x, rows));
    const Reference reference =
        reference_product(x, rows, dequantize(weight), weight.out_features, weight.in_features, {});
    expect_near_reference(out, reference, integer_input_slack(*layer, x, rows, path));
  }

  // The integer kernel's 32-bit sums wrap for the largest 16-bit inputs and
  // weights of long 8-bit groups, and the 16-bit sums of 8-bit inputs come
  // close to their limit with the largest 4-bit weights; the results must
  // still be exact. Every input is +1 or -1 (the largest integer input) and
  // every value at its largest code or 0 (the largest |q - zero|), in groups
  // longer than one 512-row chunk.
  void exl2IntegerSumsSurviveTheLargestValues() {
    if (!linear_detail::exl2_integer_supported()) QSKIP("the processor lacks AVX2");
    for (const Exl2RowPath path :
         {Exl2RowPath::int16_inputs, Exl2RowPath::int8_inputs, Exl2RowPath::int8_inputs_256}) {
      for (const bool largest_codes : {true, false}) {
        for (const float input : {1.0f, -1.0f}) {
          Exl2Fixture exl2({{8, 1088}, {4, 544}, {2, 32}}, 16, 16);
          std::fill(exl2.q_weight.begin(), exl2.q_weight.end(), largest_codes ? ~0u : 0u);
          std::fill(exl2.q_scale.begin(), exl2.q_scale.end(), 0x76543210u);
          const LinearWeight weight = exl2.weight();
          for (const int rows : {1, 4}) {
            const std::vector<float> x(std::size_t(rows * exl2.in_features), input);
            std::vector<float> out(std::size_t(rows * 16), std::nanf(""));
            const linear_detail::Product product{x.data(), rows,    exl2.in_features,
                                                 16,       nullptr, out.data()};
            std::vector<float> xp(x.size());
            linear_detail::exl2_few_rows_product(
                pool_, product, std::get<Exl2Weight>(weight.format), 16, xp.data(), path);
            const Reference reference =
                reference_product(x, rows, dequantize(weight), 16, exl2.in_features, {});
            expect_near_reference(out, reference, std::vector<double>(out.size(), 0.0));
          }
        }
      }
    }
  }

  // One thread and many threads compute the same outputs bit for bit: the
  // split changes who computes a tile, not how.
  // The register-blocked tile kernel (AVX2 and FMA, where present) adds the
  // same terms in the same order as the portable loop, for every row count
  // around its blocks of 6 and 12 rows, short tiles and sums that already
  // hold values. Where the compiler fuses the portable loop's multiply-adds
  // (at -O2 and above) the bits are the same; builds at -O1 (the sanitized
  // one) round each product apart, so the check allows that rounding: 2^-22
  // of the sum of the terms' magnitudes, far below a term left out or put in
  // the wrong column.
  void tileKernelAddsThePortableLoopsTerms() {
    std::mt19937 rng(31);
    const std::int64_t stride = 45;  // rows of x further apart than a tile
    const auto check = [&](int width, int rows, int count, const std::vector<float>& x,
                           const std::vector<float>& tile, const std::vector<float>& start) {
      std::vector<float> blocked = start, portable = start;
      if (width == linear_detail::kWideTile) {
        linear_detail::apply_tile<linear_detail::kWideTile>(x.data(), stride, rows, tile.data(),
                                                            count, blocked.data());
        linear_detail::apply_tile_portable<linear_detail::kWideTile>(
            x.data(), stride, rows, tile.data(), count, portable.data());
      } else {
        linear_detail::apply_tile<linear_detail::kNarrowTile>(x.data(), stride, rows, tile.data(),
                                                              count, blocked.data());
        linear_detail::apply_tile_portable<linear_detail::kNarrowTile>(
            x.data(), stride, rows, tile.data(), count, portable.data());
      }
      for (int r = 0; r < rows; ++r) {
        for (int i = 0; i < width; ++i) {
          double magnitude = std::fabs(start[std::size_t(r * width + i)]);
          for (int j = 0; j < count; ++j)
            magnitude += std::fabs(double(x[std::size_t(r * stride + j)]) *
                                   tile[std::size_t(j * width + i)]);
          const std::size_t at = std::size_t(r * width + i);
          if (std::fabs(double(blocked[at]) - portable[at]) > magnitude * 0x1p-22) {
            return QStringLiteral("%1 wide, %2 rows, %3 deep: row %4 column %5: %6 against %7")
                .arg(width)
                .arg(rows)
                .arg(count)
                .arg(r)
                .arg(i)
                .arg(double(blocked[at]))
                .arg(double(portable[at]));
          }
        }
      }
      return QString();
    };
    for (const int rows : {1, 2, 5, 6, 7, 11, 12, 13, 25, 128}) {
      for (const int count : {32, 17, 1}) {
        const std::vector<float> x = random_inputs(rng, std::size_t(rows * stride));
        for (const int width : {linear_detail::kWideTile, linear_detail::kNarrowTile}) {
          const std::vector<float> tile = random_inputs(rng, std::size_t(32 * width));
          const std::vector<float> start = random_inputs(rng, std::size_t(rows * width));
          const QString problem = check(width, rows, count, x, tile, start);
          QVERIFY2(problem.isEmpty(), qPrintable(problem));
        }
      }
    }
  }

  // A decode step of several jobs with FP16 weights gives each job the bits
  // it gets alone (where the processor has F16C and FMA: both then take the
  // fused dot products), for every row count up to the few-row limit and one
  // above it, with 37 outputs (an odd weight row left) and 300 inputs (a tail
  // after the blocks of 16).
  void f16RowsOfAFewJobsGiveTheBitsOfOneJob() {
    if (!linear_detail::f16_dots_available()) QSKIP("no AVX2, FMA and F16C here");
    std::mt19937 rng(23);
    expect_rows_as_alone("dense-f16", linear_detail::kF16FewRows, ProductRows::decode, rng);
  }

  // The same for EXL2 weights in decode steps, which take the integer kernel
  // for every row count up to the few-row limit: a row's integer sums and
  // their scaling do not depend on the rows beside it. Above the limit the
  // batched products sum in another order.
  void exl2RowsOfAFewJobsGiveTheBitsOfOneJob() {
    if (!linear_detail::exl2_integer_supported()) QSKIP("no AVX2 here");
    std::mt19937 rng(29);
    for (const char* format : {"exl2-mixed", "exl2-permuted"})
      expect_rows_as_alone(format, linear_detail::kExl2FewRows, ProductRows::decode, rng);
  }

  // Decode rows of EXL2 weights take 8-bit inputs (2- and 4-bit groups) and
  // prompt rows do not: the two kinds of product of the same rows differ, and
  // each lies within its own rounding of the dequantized product.
  void exl2DecodeAndPromptRowsTakeTheirOwnInputs() {
    if (!linear_detail::exl2_integer_supported()) QSKIP("no AVX2 here");
    std::mt19937 rng(41);
    const std::unique_ptr<Layer> layer = make_layer("exl2-mixed", rng);
    const LinearWeight& weight = layer->weight;
    for (const int rows : {1, 3, 9, 16}) {
      const std::vector<float> x = random_inputs(rng, std::size_t(rows * weight.in_features));
      const Reference reference = reference_product(x, rows, dequantize(weight),
                                                    weight.out_features, weight.in_features, {});
      const auto run = [&](ProductRows kind) {
        std::vector<float> out(std::size_t(rows * weight.out_features), std::nanf(""));
        linear(pool_, x.data(), rows, weight, out.data(), kind);
        return out;
      };
      const std::vector<float> decode = run(ProductRows::decode);
      const std::vector<float> prompt = run(ProductRows::prompt);
      QVERIFY(decode != prompt);
      expect_near_reference(decode, reference,
                            integer_input_slack(*layer, x, rows, Exl2RowPath::int8_inputs));
      const Exl2RowPath prompt_path =
          wide_vnni_allowed() ? Exl2RowPath::int16_inputs : Exl2RowPath::float_inputs;
      expect_near_reference(prompt, reference, integer_input_slack(*layer, x, rows, prompt_path));
      // 8-bit rounding is coarser: the decode rows lie further from the
      // exact products than the prompt rows do.
      double decode_error = 0.0;
      double prompt_error = 0.0;
      for (std::size_t i = 0; i < decode.size(); ++i) {
        decode_error += std::abs(double(decode[i]) - reference.values[i]);
        prompt_error += std::abs(double(prompt[i]) - reference.values[i]);
      }
      QVERIFY2(
          decode_error > prompt_error,
          qPrintable(
              QStringLiteral("%1 rows: %2 vs %3").arg(rows).arg(decode_error).arg(prompt_error)));
    }
  }

  // The 512-bit integer kernels (AVX-512BW, and with VNNI where present) sum
  // the same integers in the same chunks and scale them in the same order as
  // the 256-bit ones, for every group width (2- and 4-bit groups with 8-bit
  // inputs, the others with 16-bit), short groups and padded columns: the
  // same bits, so a model decodes alike on both kinds of processor.
  void exl2WideIntegerKernelsGiveTheBitsOfThe256BitOnes() {
    if (!linear_detail::exl2_integer_wide_supported()) QSKIP("the processor lacks AVX-512BW");
    std::mt19937 rng(37);
    for (const char* format : {"exl2-mixed", "exl2-permuted", "exl2-padded", "exl2-long-groups"}) {
      const std::unique_ptr<Layer> layer = make_layer(format, rng);
      const LinearWeight& weight = layer->weight;
      for (const int rows : {1, 2, 3, 4, 7}) {
        const std::vector<float> x = random_inputs(rng, std::size_t(rows * weight.in_features));
        const auto run = [&](Exl2RowPath path) {
          std::vector<float> xp(x.size());
          std::vector<float> out(std::size_t(rows * weight.out_features), std::nanf(""));
          const linear_detail::Product product{
              x.data(), rows, weight.in_features, weight.out_features, nullptr, out.data()};
          linear_detail::exl2_few_rows_product(pool_, product, std::get<Exl2Weight>(weight.format),
                                               layer->exl2->q_columns, xp.data(), path);
          return out;
        };
        const std::vector<float> wide = run(Exl2RowPath::int8_inputs);
        const std::vector<float> narrow = run(Exl2RowPath::int8_inputs_256);
        QVERIFY2(std::memcmp(wide.data(), narrow.data(), wide.size() * sizeof(float)) == 0,
                 qPrintable(QStringLiteral("%1, %2 rows").arg(format).arg(rows)));
      }
    }
  }

  void threadCountDoesNotChangeResults() {
    std::mt19937 rng(5);
    for (const QByteArray& format : kFormats) {
      const std::unique_ptr<Layer> layer = make_layer(format, rng);
      for (const std::int64_t rows : {1, 3, 40}) {
        const std::vector<float> x =
            random_inputs(rng, std::size_t(rows * layer->weight.in_features));
        std::vector<float> serial(std::size_t(rows * layer->weight.out_features));
        std::vector<float> parallel(serial.size());
        ThreadPool single(1);
        linear(single, x.data(), rows, layer->weight, serial.data());
        linear(pool_, x.data(), rows, layer->weight, parallel.data());
        QVERIFY2(serial == parallel, format.constData());
      }
    }
  }

  // linear_many over weights of every format equals linear() for each, bit
  // for bit: EXL2 decode steps share one loop, the rest run one by one.
  void linearManyEqualsLinearForEach() {
    std::mt19937 rng(11);
    // Each group shares an input size, as a layer's q, k and v do.
    const std::vector<std::vector<QByteArray>> groups = {
        {"exl2-mixed", "exl2-permuted", "gptq-partial-group"},
        {"exl2-padded", "exl2-padded"},
        {"dense-f16", "dense-bf16"}};
    for (const std::vector<QByteArray>& formats : groups) {
      std::vector<std::unique_ptr<Layer>> layers;
      for (const QByteArray& format : formats) {
        layers.push_back(make_layer(format, rng));
        add_bias(*layers.back(), "f16", rng);
      }
      for (const std::int64_t rows : {1, 3, 7}) {
        const std::int64_t in = layers.front()->weight.in_features;
        const std::vector<float> x = random_inputs(rng, std::size_t(rows * in));
        std::vector<const LinearWeight*> weights;
        std::vector<std::vector<float>> alone, together;
        std::vector<float*> outs;
        for (const auto& layer : layers) {
          QCOMPARE(layer->weight.in_features, in);
          weights.push_back(&layer->weight);
          alone.emplace_back(std::size_t(rows * layer->weight.out_features));
          together.emplace_back(alone.back().size(), std::nanf(""));
          linear(pool_, x.data(), rows, layer->weight, alone.back().data());
        }
        for (std::vector<float>& out : together)
          outs.push_back(out.data());
        linear_many(pool_, x.data(), rows, weights, outs);
        for (std::size_t i = 0; i < layers.size(); ++i)
          QVERIFY2(alone[i] == together[i], formats[i].constData());
      }
      std::vector<float> out(1);
      std::vector<float*> one_out{out.data()};
      std::vector<const LinearWeight*> two{&layers[0]->weight, &layers[1]->weight};
      QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                               linear_many(pool_, out.data(), 1, two, one_out));
    }
  }

  void rejectsBadArguments() {
    std::mt19937 rng(3);
    const std::unique_ptr<Layer> layer = make_layer("gptq-act-order", rng);
    std::vector<float> x(256), out(104);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             linear(pool_, nullptr, 1, layer->weight, out.data()));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             linear(pool_, x.data(), -1, layer->weight, out.data()));
    layer->gptq->g_idx[17] = layer->gptq->groups;
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             linear(pool_, x.data(), 1, layer->gptq->weight(), out.data()));
    LinearWeight dense;
    dense.in_features = 8;
    dense.out_features = 8;
    dense.format = DenseWeight{x.data(), DType::I32};
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, linear(pool_, x.data(), 1, dense, out.data()));
  }

  // The branch-free FP16 conversion of the dense products agrees with the
  // reference conversion on every one of the 65536 inputs.
  void fastHalfConversionIsExact() {
    for (std::uint32_t bits = 0; bits < 0x10000u; ++bits) {
      const auto h = static_cast<std::uint16_t>(bits);
      const float fast = linear_detail::widen_half(h);
      const float exact = half_to_float(h);
      if (std::isnan(exact)) {
        QVERIFY(std::isnan(fast));
      } else {
        QCOMPARE(std::bit_cast<std::uint32_t>(fast), std::bit_cast<std::uint32_t>(exact));
      }
    }
  }
};

QUIRE_TEST(LinearProductTest)
#include "test_linear_products.moc"
