// CUDA linear layers against the CPU: every weight format (dense F16, BF16
// and F32; EXL2 of mixed widths with permutation and padded columns; GPTQ v1,
// v2, act-order and partial groups; FP8 with a scale per row or per tensor;
// EXL3 of every width and codebook, padded), row counts on both
// sides of the fused kernels' limit, with and without bias, on fresh random inputs (the seed is
// printed) and NaN-poisoned outputs with a guard past the end. Part of the
// ops suite: label "gpu", skipped without a backend.

#include <QTest>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <variant>
#include <vector>

#include "cuda_test_support.h"
#include "exl3_test_layer.h"
#include "linear_test_support.h"
#include "quire/kernels/cpu/cpu_backend.h"
#include "quire/kernels/cpu/half.h"
#include "quire/kernels/cpu/linear.h"
#include "test_main.h"

using namespace quire::kernels;
using namespace quire::test;

namespace {

constexpr int kDevice = quire::test::kCudaTestDevice;
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
// Outputs past the last one, which must stay NaN.
constexpr std::size_t kGuard = 64;

// EXL2's mixed plan has every width, a group of 4 rows (8 bits, one word),
// and groups whose last block is short (6 bits x 16, 2 bits x 48).
const std::vector<std::pair<int, int>> kMixedPlan = {{8, 32}, {6, 64}, {6, 16}, {5, 32}, {4, 128},
                                                     {3, 32}, {2, 16}, {8, 4},  {4, 8},  {2, 48}};

Layer make_layer(const QByteArray& format, std::mt19937& rng) {
  Layer layer;
  if (format.startsWith("dense")) {
    // 304 inputs take 16-byte loads; "short" has 200 (one split of the input
    // dimension), "odd" 299, which takes the element-by-element kernel.
    const std::int64_t in = format.endsWith("odd") ? 299 : format.endsWith("short") ? 200 : 304;
    const std::int64_t out = 37;
    const std::vector<float> values = random_inputs(rng, std::size_t(out * in));
    DenseWeight dense;
    if (format.startsWith("dense-f32")) {
      layer.floats = values;
      dense = {layer.floats.data(), DType::F32};
    } else {
      const bool bf16 = format.startsWith("dense-bf16");
      for (const float v : values)
        layer.halves.push_back(bf16 ? float_to_bf16(v) : float_to_half(v));
      dense = {layer.halves.data(), bf16 ? DType::BF16 : DType::F16};
    }
    layer.weight.in_features = in;
    layer.weight.out_features = out;
    layer.weight.format = dense;
  } else if (format == "exl2-mixed") {
    layer.exl2 = random_exl2(rng, kMixedPlan, 104, 104, true);
  } else if (format == "exl2-padded") {
    layer.exl2 = random_exl2(rng, kMixedPlan, 100, 128, true);
  } else if (format == "exl2-wide") {
    layer.exl2 =
        random_exl2(rng, {{4, 64}, {3, 96}, {5, 32}, {6, 32}, {2, 32}, {8, 32}}, 1000, 1024, true);
  } else if (format == "gptq-v1") {
    layer.gptq = random_gptq(rng, 256, 104, 32, false, false);
  } else if (format == "gptq-v2") {
    layer.gptq = random_gptq(rng, 256, 104, 32, false, true);
  } else if (format == "gptq-act-order") {
    layer.gptq = random_gptq(rng, 256, 104, 32, true, false);
  } else if (format == "gptq-partial-group") {
    layer.gptq = random_gptq(rng, 320, 104, 128, true, true);
  } else if (format == "gptq-odd-group") {
    // Groups of 12 rows: words whose eight rows span two groups.
    layer.gptq = random_gptq(rng, 320, 104, 12, false, false);
  } else if (format == "gptq8-v1") {
    layer.gptq = random_gptq(rng, 256, 104, 32, false, false, {8, false, DType::F16});
  } else if (format == "gptq8-act-order") {
    layer.gptq = random_gptq(rng, 256, 104, 64, true, true, {8, false, DType::F16});
  } else if (format == "gptq8-odd-group") {
    // Groups of 6 rows: words whose four rows span two groups.
    layer.gptq = random_gptq(rng, 320, 104, 6, false, true, {8, false, DType::F16});
  } else if (format == "int4-sym-bf16") {
    // compressed-tensors' symmetric W4A16 as Quire repacks it: no zero
    // points, BF16 scales.
    layer.gptq = random_gptq(rng, 256, 104, 128, true, true, {4, true, DType::BF16});
  } else if (format == "int8-sym-f32") {
    layer.gptq = random_gptq(rng, 320, 104, 320, false, true, {8, true, DType::F32});
  } else if (format == "awq-like") {
    // AutoAWQ's layers repacked: exact zeros, FP16 scales, groups in order.
    layer.gptq = random_gptq(rng, 256, 1000, 64, false, true);
  } else if (format.startsWith("fp8")) {
    // 304 inputs take the 16-code loads, "odd" 300 the code-by-code kernel.
    make_fp8_layer(layer, rng, 104, format.endsWith("odd") ? 300 : 304,
                   !format.startsWith("fp8-tensor"));
  }
  if (layer.exl2) layer.weight = layer.exl2->weight();
  if (layer.gptq) layer.weight = layer.gptq->weight();
  return layer;
}

const QByteArrayList kFormats = {
    "dense-f16",       "dense-bf16",      "dense-f32",          "dense-f16-short", "dense-bf16-odd",
    "dense-f32-odd",   "exl2-mixed",      "exl2-padded",        "exl2-wide",       "gptq-v1",
    "gptq-v2",         "gptq-act-order",  "gptq-partial-group", "gptq-odd-group",  "gptq8-v1",
    "gptq8-act-order", "gptq8-odd-group", "int4-sym-bf16",      "int8-sym-f32",    "awq-like",
    "fp8-channel",     "fp8-tensor",      "fp8-channel-odd"};

// Tolerances, as fractions of sum_k |x_k w_nk| + |b_n| (the scale of any
// rounding error in an output), against the exact product of the CPU's
// dequantize() computed in double:
// - the fused kernels (rows <= 8, or any count without cuBLAS) sum in FP32:
//   under (K + 8) * 2^-24, doubled for margin;
// - cuBLAS with FP16 or BF16 operands rounds each input (and a quantized
//   weight) to 11 or 8 significant bits: 2^-11 per rounding for FP16, so
//   2e-3 for quantized and 1e-3 for dense F16 weights (and FP8 ones, whose
//   FP16 copies are exact); 2^-9 for BF16, so 4e-3.
// - EXL3's decode products take each rotated input as two FP16 parts (22
//   significant bits) into FP32 tensor-core sums, between two FP32
//   rotations: twice the FP32 bound over the padded inputs; its prefill
//   rounds the rotated inputs to FP16 (W^ is exact in FP16): 2e-3.
// QUIRE_CUDA_LINEAR names the decode products' variant (the device kit runs
// this suite with each). half2 and half2x4 multiply EXL2 products of up to 8
// rows, and GPTQ ones of 4 or 8 bits whose groups are whole 32-row blocks in
// row order, in half2 within each block, whose sum lies within 17 * 2^-11 of
// the block's magnitude (tests/kernels/half2 checks that bound with the
// kernels' own FP16 steps). dp4a takes EXL2's 2-, 4- and 8-bit groups and
// those GPTQ weights with 8-bit inputs scaled per block, as the CPU's AVX2
// EXL2 products do: within 1/254
// of the block's largest input per input, at most 20/254 of the scale with
// these inputs (see cpu_tolerance).
double variant_tolerance(const LinearWeight& weight) {
  const QByteArray variant = qgetenv("QUIRE_CUDA_LINEAR");
  if (variant.isEmpty() || variant == "fp32") return 0.0;
  const double half2 = 17.0 * std::ldexp(1.0, -11);
  if (std::holds_alternative<Exl2Weight>(weight.format)) {
    return variant == "dp4a" ? half2 + 20.0 / 254.0 : half2;
  }
  const auto* gptq = std::get_if<GptqWeight>(&weight.format);
  const bool half2_gptq = gptq != nullptr && gptq->g_idx == nullptr && gptq->group_size > 0 &&
                          gptq->group_size % 32 == 0 && weight.in_features % 32 == 0 &&
                          (gptq->bits == 4 || gptq->bits == 8);
  if (!half2_gptq) return 0.0;
  return variant == "dp4a" ? half2 + 20.0 / 254.0 : half2;
}

double exact_tolerance(const LinearWeight& weight, int rows) {
  if (const auto* exl3 = std::get_if<Exl3Weight>(&weight.format)) {
    return rows <= 8 ? 4.0 * double(exl3->padded_in + 8) * std::ldexp(1.0, -24) : 2e-3;
  }
  const double fp32 = 2.0 * double(weight.in_features + 8) * std::ldexp(1.0, -24);
  if (rows <= 8) return fp32 + variant_tolerance(weight);
  if (const auto* dense = std::get_if<DenseWeight>(&weight.format)) {
    if (dense->dtype == DType::F32) return fp32;
    return dense->dtype == DType::F16 ? 1e-3 : 4e-3;
  }
  if (std::holds_alternative<Fp8Weight>(weight.format)) return 1e-3;
  return 2e-3;
}

// The CPU's own products are tested to lie within 1e-5 of the same scale
// (tests/kernels/linear), and its EXL2 products of up to 4 rows, which take
// their inputs as integers where the processor has AVX2, within a further
// 1/254 of each group's largest input per input (8-bit inputs of 2- and 4-bit
// groups; 1/65534 for the others): at most 20/254 of the scale with these
// inputs (magnitudes 0.05 to 1). The two backends may differ by both errors.
// The CPU's EXL3 products sum in FP32 between its FP32 rotations.
double cpu_tolerance(const LinearWeight& weight, int rows) {
  if (const auto* exl3 = std::get_if<Exl3Weight>(&weight.format)) {
    return 1e-5 + 2.0 * double(exl3->padded_in + 8) * std::ldexp(1.0, -24);
  }
  const bool integer_inputs = std::holds_alternative<Exl2Weight>(weight.format) && rows <= 4;
  return 1e-5 + (integer_inputs ? 20.0 / 254.0 : 0.0);
}

}  // namespace

class CudaLinearTest : public QObject {
  Q_OBJECT

  template <typename T>
  DeviceBuffer upload(const std::vector<T>& host) {
    return quire::test::upload_to_gpu(*gpu_, host);
  }

  std::vector<float> download(const DeviceBuffer& buffer, std::size_t count) {
    return quire::test::download_floats(*gpu_, buffer, count);
  }

  // The layer's tensors on the GPU; `buffers` owns them.
  LinearWeight to_device(const Layer& layer, std::vector<DeviceBuffer>& buffers) {
    const auto keep = [&](DeviceBuffer buffer) {
      buffers.push_back(std::move(buffer));
      return buffers.back().data();
    };
    LinearWeight weight = layer.weight;
    if (!layer.bias.empty()) {
      weight.bias = layer.bias32.empty() ? keep(upload(layer.bias16)) : keep(upload(layer.bias32));
    }
    if (auto* dense = std::get_if<DenseWeight>(&weight.format)) {
      dense->data = layer.floats.empty() ? keep(upload(layer.halves)) : keep(upload(layer.floats));
    } else if (auto* exl2 = std::get_if<Exl2Weight>(&weight.format)) {
      exl2->q_weight = static_cast<const std::uint32_t*>(keep(upload(layer.exl2->q_weight)));
      exl2->q_scale = static_cast<const std::uint32_t*>(keep(upload(layer.exl2->q_scale)));
      exl2->q_scale_max = static_cast<const std::uint16_t*>(keep(upload(layer.exl2->q_scale_max)));
      exl2->perm = static_cast<const std::int32_t*>(keep(upload(layer.exl2->perm)));
    } else if (auto* fp8 = std::get_if<Fp8Weight>(&weight.format)) {
      fp8->data = static_cast<const std::uint8_t*>(keep(upload(layer.fp8)));
      fp8->scales = static_cast<const float*>(keep(upload(layer.fp8_scales)));
    } else {
      auto& gptq = std::get<GptqWeight>(weight.format);
      gptq.qweight = static_cast<const std::uint32_t*>(keep(upload(layer.gptq->qweight)));
      gptq.qzeros = layer.gptq->qzeros.empty()
                        ? nullptr
                        : static_cast<const std::uint32_t*>(keep(upload(layer.gptq->qzeros)));
      gptq.scales = layer.gptq->scale_dtype == DType::F32 ? keep(upload(layer.gptq->scales32))
                                                          : keep(upload(layer.gptq->scales));
      if (!layer.gptq->g_idx.empty()) {
        gptq.g_idx = static_cast<const std::int32_t*>(keep(upload(layer.gptq->g_idx)));
      }
    }
    return weight;
  }

  // An EXL3 layer's tensors on the GPU, `trellis_offset` bytes past an
  // aligned address (2: not even on a 4-byte boundary); the bias from
  // `layer`, whose weight is `exl3`'s.
  LinearWeight exl3_to_device(const Exl3TestLayer& exl3, const Layer& layer,
                              std::vector<DeviceBuffer>& buffers, std::size_t trellis_offset = 0) {
    LinearWeight weight = layer.weight;
    if (!layer.bias.empty()) {
      buffers.push_back(layer.bias32.empty() ? upload(layer.bias16) : upload(layer.bias32));
      weight.bias = buffers.back().data();
    }
    auto& format = std::get<Exl3Weight>(weight.format);
    const std::size_t bytes = exl3.trellis.size() * sizeof(std::uint16_t);
    buffers.push_back(gpu_->allocate(kDevice, bytes + trellis_offset, "test data"));
    char* trellis = buffers.back().as<char>() + trellis_offset;
    gpu_->copy(trellis, kDevice, exl3.trellis.data(), -1, bytes);
    format.trellis = reinterpret_cast<const std::uint16_t*>(trellis);
    buffers.push_back(upload(exl3.suh));
    format.suh = buffers.back().as<std::uint16_t>();
    buffers.push_back(upload(exl3.svh));
    format.svh = buffers.back().as<std::uint16_t>();
    return weight;
  }

  // Runs the layer on both backends and checks every output, and that
  // nothing past the outputs was written. `x_offset` floats of padding before
  // the inputs make them unaligned.
  void compare(const Layer& layer, const LinearWeight& device_weight, int rows,
               std::size_t x_offset, const char* what) {
    const LinearWeight& weight = layer.weight;
    const std::size_t in = std::size_t(weight.in_features);
    const std::size_t count = std::size_t(rows) * std::size_t(weight.out_features);
    std::vector<float> padded = random_inputs(rng_, x_offset + rows * in);
    const std::vector<float> x(padded.begin() + std::ptrdiff_t(x_offset), padded.end());

    CpuBackend cpu;
    std::vector<float> expected(count, kNaN);
    cpu.linear(0, x.data(), rows, weight, expected.data(), ProductRows::prompt);
    const Reference exact = reference_product(x, rows, dequantize(weight), weight.out_features,
                                              weight.in_features, layer.bias);

    DeviceBuffer x_gpu = upload(padded);
    DeviceBuffer out = upload(std::vector<float>(count + kGuard, kNaN));
    gpu_->linear(kDevice, x_gpu.as<float>() + x_offset, rows, device_weight, out.as<float>(),
                 ProductRows::prompt);
    const std::vector<float> got = download(out, count + kGuard);

    const double tolerance = exact_tolerance(weight, rows);
    for (std::size_t i = 0; i < count; ++i) {
      const double scale = exact.magnitudes[i];
      const double from_exact = std::fabs(double(got[i]) - exact.values[i]);
      const double from_cpu = std::fabs(double(got[i]) - double(expected[i]));
      if (!(from_exact <= tolerance * scale) ||
          !(from_cpu <= (tolerance + cpu_tolerance(weight, rows)) * scale)) {
        QFAIL(qPrintable(QStringLiteral("%1, %2 rows: output %3 is %4 on the GPU, %5 on the CPU, "
                                        "%6 exactly (scale %7, tolerance %8)")
                             .arg(QLatin1String(what))
                             .arg(rows)
                             .arg(i)
                             .arg(double(got[i]), 0, 'g', 9)
                             .arg(double(expected[i]), 0, 'g', 9)
                             .arg(exact.values[i], 0, 'g', 9)
                             .arg(scale, 0, 'g', 4)
                             .arg(tolerance, 0, 'g', 3)));
      }
    }
    for (std::size_t i = count; i < got.size(); ++i) {
      if (!std::isnan(got[i])) {
        QFAIL(qPrintable(QStringLiteral("%1, %2 rows: wrote past the outputs, at %3")
                             .arg(QLatin1String(what))
                             .arg(rows)
                             .arg(i)));
      }
    }
  }

 private slots:
  void initTestCase() {
    QString why_not;
    gpu_ = quire::test::start_cuda_backend(rng_, why_not);
    if (!gpu_) QSKIP(qPrintable(why_not));
  }

  void cleanupTestCase() { gpu_.reset(); }

  // QUIRE_CUDA_LINEAR names the decode products' kernels; a value it does
  // not know is refused at the first product, naming the variable and the
  // values it takes.
  void unknownVariantIsRefused() {
    const QByteArray before = qgetenv("QUIRE_CUDA_LINEAR");
    qputenv("QUIRE_CUDA_LINEAR", "fastest");
    QString why_not;
    std::unique_ptr<Backend> fresh = quire::test::start_cuda_backend(rng_, why_not);
    QVERIFY2(fresh, qPrintable(why_not));
    const Layer layer = make_layer("exl2-mixed", rng_);
    std::vector<DeviceBuffer> buffers;
    const LinearWeight device_weight = to_device(layer, buffers);
    DeviceBuffer x = upload(random_inputs(rng_, std::size_t(layer.weight.in_features)));
    DeviceBuffer out = upload(std::vector<float>(std::size_t(layer.weight.out_features), 0.0f));
    QString message;
    try {
      fresh->linear(kDevice, x.as<float>(), 1, device_weight, out.as<float>(), ProductRows::prompt);
    } catch (const std::exception& error) {
      message = QString::fromUtf8(error.what());
    }
    if (before.isNull()) {
      qunsetenv("QUIRE_CUDA_LINEAR");
    } else {
      qputenv("QUIRE_CUDA_LINEAR", before);
    }
    QVERIFY2(message.contains("QUIRE_CUDA_LINEAR is \"fastest\"") && message.contains("half2"),
             qPrintable(message));
  }

  void matchesTheCpu_data() {
    QTest::addColumn<QByteArray>("format");
    QTest::addColumn<QByteArray>("bias");
    QTest::addColumn<int>("rows");
    for (const QByteArray& format : kFormats) {
      // 8 rows: the fused kernels' largest pass; 33: four passes' worth,
      // which goes to cuBLAS.
      for (const int rows : {1, 2, 3, 7, 8, 33}) {
        for (const char* bias : {"none", "f16"}) {
          QTest::addRow("%s, bias %s, %d rows", format.constData(), bias, rows)
              << format << QByteArray(bias) << rows;
        }
      }
      for (const char* bias : {"bf16", "f32"}) {
        for (const int rows : {1, 33}) {
          QTest::addRow("%s, bias %s, %d rows", format.constData(), bias, rows)
              << format << QByteArray(bias) << rows;
        }
      }
    }
  }

  void matchesTheCpu() {
    QFETCH(QByteArray, format);
    QFETCH(QByteArray, bias);
    QFETCH(int, rows);
    Layer layer = make_layer(format, rng_);
    add_bias(layer, bias, rng_);
    std::vector<DeviceBuffer> buffers;
    const LinearWeight device_weight = to_device(layer, buffers);
    compare(layer, device_weight, rows, 0, format.constData());
  }

  // Inputs one float past an aligned address are copied before the fused
  // kernels read them; a weight one element past one is read element by
  // element. cuBLAS takes both as they are.
  void unalignedInputsAndWeights() {
    for (const char* format : {"dense-f16", "dense-bf16", "dense-f32", "gptq-v1", "fp8-channel"}) {
      Layer layer = make_layer(format, rng_);
      add_bias(layer, "f32", rng_);
      std::vector<DeviceBuffer> buffers;
      LinearWeight device_weight = to_device(layer, buffers);
      // The same values, one element further into a longer buffer.
      const auto shift = [&](const void* data, std::size_t size) {
        const std::size_t bytes =
            std::size_t(layer.weight.in_features) * std::size_t(layer.weight.out_features) * size;
        DeviceBuffer shifted = gpu_->allocate(kDevice, bytes + size, "test data");
        gpu_->copy(static_cast<char*>(shifted.data()) + size, kDevice, data, kDevice, bytes);
        buffers.push_back(std::move(shifted));
        return static_cast<const char*>(buffers.back().data()) + size;
      };
      if (auto* dense = std::get_if<DenseWeight>(&device_weight.format)) {
        dense->data = shift(dense->data, dtype_size(dense->dtype));
      } else if (auto* fp8 = std::get_if<Fp8Weight>(&device_weight.format)) {
        fp8->data = reinterpret_cast<const std::uint8_t*>(shift(fp8->data, 1));
      }
      for (const int rows : {1, 5, 33}) {
        compare(layer, device_weight, rows, 1, format);
        if (QTest::currentTestFailed()) return;
      }
    }
  }

  // EXL3 of each width and codebook with fused and cuBLAS row counts; padded
  // inputs and outputs with 1 to 9, 16, 33 and a prefill's rows; split
  // input dimensions (few columns) and warps that take several blocks of
  // inputs (many columns, 8 rows, whose partial sums allow few splits).
  void exl3MatchesTheCpu_data() {
    QTest::addColumn<int>("bits");
    QTest::addColumn<int>("codebook");
    QTest::addColumn<int>("in");
    QTest::addColumn<int>("out");
    QTest::addColumn<QByteArray>("bias");
    QTest::addColumn<int>("rows");
    const char* names[] = {"3inst", "mcg", "mul1"};
    const auto add = [&](int bits, Exl3Codebook book, int in, int out, const char* bias, int rows) {
      QTest::addRow("%d bits %s, %d x %d, bias %s, %d rows", bits, names[int(book)], in, out, bias,
                    rows)
          << bits << int(book) << in << out << QByteArray(bias) << rows;
    };
    for (int bits = 1; bits <= 8; ++bits) {
      for (const Exl3Codebook book :
           {Exl3Codebook::three_inst, Exl3Codebook::mcg, Exl3Codebook::mul1}) {
        for (const int rows : {1, 8, 33})
          add(bits, book, 256, 128, "none", rows);
      }
    }
    for (const int rows : {1, 2, 3, 4, 5, 6, 7, 8, 9, 16, 33, 300}) {
      add(4, Exl3Codebook::mul1, 200, 72, "f16", rows);
      add(3, Exl3Codebook::mcg, 384, 330, "f32", rows);
      add(7, Exl3Codebook::three_inst, 1000, 300, "bf16", rows);
    }
    for (const int rows : {1, 3, 8, 33})
      add(5, Exl3Codebook::mcg, 4096, 256, "f16", rows);
    // 16 input blocks and 128 column tiles: at 8 rows the partial sums
    // allow at most 4 splits (132 multiprocessors), so each warp takes two
    // blocks or more.
    add(2, Exl3Codebook::mul1, 2048, 16384, "none", 8);
  }

  void exl3MatchesTheCpu() {
    QFETCH(int, bits);
    QFETCH(int, codebook);
    QFETCH(int, in);
    QFETCH(int, out);
    QFETCH(QByteArray, bias);
    QFETCH(int, rows);
    const Exl3TestLayer exl3 =
        random_exl3_layer(rng_, in, out, bits, static_cast<Exl3Codebook>(codebook));
    Layer layer;
    layer.weight = exl3.weight();
    add_bias(layer, bias, rng_);
    std::vector<DeviceBuffer> buffers;
    const LinearWeight device_weight = exl3_to_device(exl3, layer, buffers);
    compare(layer, device_weight, rows, 0, "EXL3");
  }

  // A trellis two bytes past a 16-byte boundary is copied by 16-bit words;
  // unaligned inputs are read one by one into the rotation.
  void exl3UnalignedTrellisAndInputs() {
    const Exl3TestLayer exl3 = random_exl3_layer(rng_, 300, 200, 6, Exl3Codebook::mul1);
    Layer layer;
    layer.weight = exl3.weight();
    add_bias(layer, "f32", rng_);
    std::vector<DeviceBuffer> buffers;
    const LinearWeight device_weight = exl3_to_device(exl3, layer, buffers, 2);
    for (const int rows : {1, 5, 33}) {
      compare(layer, device_weight, rows, 1, "EXL3, unaligned");
      if (QTest::currentTestFailed()) return;
    }
  }

  // The EXL2 group table is cached by q_weight's address: a different weight
  // at the same address (a model freed and another loaded) must not run with
  // the old groups.
  void exl2GroupsFollowTheWeightAtOneAddress() {
    const Layer first = make_layer("exl2-mixed", rng_);
    Layer second;
    second.exl2 = random_exl2(rng_, {{2, 64}, {5, 64}, {8, 64}, {3, 96}, {4, 32}, {6, 48}, {8, 12}},
                              104, 104, true);
    second.weight = second.exl2->weight();
    QCOMPARE(second.weight.in_features, first.weight.in_features);

    // Room for either weight's tensors, at one address each.
    const auto larger = [&](const auto member) {
      const std::size_t bytes =
          std::max((*first.exl2.*member).size(), (*second.exl2.*member).size()) *
          sizeof((*first.exl2.*member)[0]);
      return gpu_->allocate(kDevice, bytes, "test data");
    };
    DeviceBuffer q_weight = larger(&Exl2Fixture::q_weight);
    DeviceBuffer q_scale = larger(&Exl2Fixture::q_scale);
    DeviceBuffer q_scale_max = larger(&Exl2Fixture::q_scale_max);
    DeviceBuffer perm = larger(&Exl2Fixture::perm);
    const auto fill = [&](DeviceBuffer& buffer, const auto& host) {
      gpu_->copy(buffer.data(), kDevice, host.data(), -1, host.size() * sizeof(host[0]));
    };
    const Layer* const turns[] = {&first, &second, &first};
    for (const Layer* layer : turns) {
      fill(q_weight, layer->exl2->q_weight);
      fill(q_scale, layer->exl2->q_scale);
      fill(q_scale_max, layer->exl2->q_scale_max);
      fill(perm, layer->exl2->perm);
      LinearWeight device_weight = layer->weight;
      auto& exl2 = std::get<Exl2Weight>(device_weight.format);
      exl2.q_weight = q_weight.as<std::uint32_t>();
      exl2.q_scale = q_scale.as<std::uint32_t>();
      exl2.q_scale_max = q_scale_max.as<std::uint16_t>();
      exl2.perm = perm.as<std::int32_t>();
      for (const int rows : {1, 33}) {
        compare(*layer, device_weight, rows, 0, "EXL2 at a reused address");
        if (QTest::currentTestFailed()) return;
      }
    }
  }

  // The CPU backend's checks, with its exception type.
  void rejectsBadArguments() {
    Layer layer = make_layer("gptq-act-order", rng_);
    std::vector<DeviceBuffer> buffers;
    const LinearWeight weight = to_device(layer, buffers);
    DeviceBuffer x = upload(std::vector<float>(256 * 2, 1.0f));
    DeviceBuffer out = upload(std::vector<float>(104 * 2, kNaN));
    QVERIFY_THROWS_EXCEPTION(
        std::invalid_argument,
        gpu_->linear(kDevice, nullptr, 1, weight, out.as<float>(), ProductRows::prompt));
    QVERIFY_THROWS_EXCEPTION(
        std::invalid_argument,
        gpu_->linear(kDevice, x.as<float>(), -1, weight, out.as<float>(), ProductRows::prompt));
    gpu_->linear(kDevice, x.as<float>(), 0, weight, out.as<float>(),
                 ProductRows::prompt);  // nothing to do
    QVERIFY(std::isnan(download(out, 1)[0]));

    layer.gptq->g_idx[17] = layer.gptq->groups;
    const LinearWeight bad_groups = to_device(layer, buffers);
    QVERIFY_THROWS_EXCEPTION(
        std::invalid_argument,
        gpu_->linear(kDevice, x.as<float>(), 1, bad_groups, out.as<float>(), ProductRows::prompt));

    Layer exl2 = make_layer("exl2-mixed", rng_);
    LinearWeight gapped = to_device(exl2, buffers);
    std::get<Exl2Weight>(gapped.format).groups[1].first_row += 4;
    QVERIFY_THROWS_EXCEPTION(
        std::invalid_argument,
        gpu_->linear(kDevice, x.as<float>(), 1, gapped, out.as<float>(), ProductRows::prompt));

    LinearWeight dense;
    dense.in_features = 8;
    dense.out_features = 8;
    dense.format = DenseWeight{x.data(), DType::I32};
    QVERIFY_THROWS_EXCEPTION(
        std::invalid_argument,
        gpu_->linear(kDevice, x.as<float>(), 1, dense, out.as<float>(), ProductRows::prompt));
  }

 private:
  std::unique_ptr<Backend> gpu_;
  std::mt19937 rng_;
};

QUIRE_TEST(CudaLinearTest)
#include "test_cuda_linear.moc"
