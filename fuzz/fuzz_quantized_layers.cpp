// Feeds arbitrary tensor sets to the readers of group-quantized layers (GPTQ,
// AutoAWQ's GEMM layout, compressed-tensors' pack-quantized and naive int8):
// the bytes choose the format, its options (bits, symmetry, group size,
// actorder), the layer's shape from config.json, and each tensor's dtype,
// shape and contents. A refusal is a ModelError. A layout that is accepted is
// repacked, its descriptor goes through the kernels' shared checks, and every
// word, zero point, scale and group index the products would read is read
// through bounds-checked accessors. Anything else -- a crash, a sanitizer
// report, std::out_of_range from those reads, or the kernels' checks
// refusing what a reader accepted (std::invalid_argument) -- is a bug. (The
// CPU products themselves are not linked: their target_clones templates do
// not build with Clang.)

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "quire/engine/formats/awq_layout.h"
#include "quire/engine/formats/gptq_layout.h"
#include "quire/engine/formats/gptq_repacked.h"
#include "quire/engine/formats/naive_quantized_layout.h"
#include "quire/engine/formats/pack_quantized_layout.h"
#include "quire/engine/model_error.h"
#include "quire/kernels/linear_checks.h"

namespace {

using namespace quire::engine::formats;
using quire::kernels::DType;

class Input {
 public:
  Input(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}

  std::uint8_t byte() { return position_ < size_ ? data_[position_++] : 0; }
  bool flag() { return (byte() & 1) != 0; }
  template <typename T, std::size_t N>
  T pick(const std::array<T, N>& choices) {
    return choices[byte() % N];
  }
  // The remaining bytes, repeated to fill `count` (zeros when none are left).
  std::vector<std::byte> fill(std::size_t count) {
    std::vector<std::byte> bytes(count);
    for (std::size_t i = 0; i < count; ++i)
      bytes[i] = std::byte(byte());
    return bytes;
  }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t position_ = 0;
};

constexpr std::array<std::int64_t, 12> kDimensions = {0, 1, 2, 3, 4, 7, 8, 16, 24, 32, 64, 128};
constexpr std::array<DType, 9> kDtypes = {DType::I32, DType::I32,  DType::I32,
                                          DType::F16, DType::BF16, DType::F32,
                                          DType::I8,  DType::I64,  DType::U8};
// Few enough weights that a full dequantization stays quick.
constexpr std::int64_t kMostElements = 1 << 16;

// Tensors built from the input, owning their bytes.
class Tensors {
 public:
  explicit Tensors(Input& input) : input_(input) {}

  std::optional<TensorView> make(DType usual) {
    const std::uint8_t choice = input_.byte();
    const DType dtype = choice % 4 == 0 ? kDtypes[(choice / 4) % kDtypes.size()] : usual;
    std::vector<std::int64_t> shape(input_.byte() % 4 == 0 ? 1 : 2);
    if (input_.byte() % 16 == 0) shape.push_back(2);
    std::int64_t elements = 1;
    for (std::int64_t& dim : shape) {
      dim = input_.pick(kDimensions);
      elements *= dim;
    }
    if (elements > kMostElements) return std::nullopt;
    storage_.push_back(
        input_.fill(static_cast<std::size_t>(elements) * quire::kernels::dtype_size(dtype)));
    return TensorView{dtype, shape, storage_.back()};
  }

  // A [2] weight_shape of the given dimensions in I64 (or I32).
  TensorView dimensions(std::int64_t out, std::int64_t in) {
    if (input_.flag()) {
      const std::int32_t values[2] = {static_cast<std::int32_t>(out),
                                      static_cast<std::int32_t>(in)};
      storage_.emplace_back(reinterpret_cast<const std::byte*>(values),
                            reinterpret_cast<const std::byte*>(values) + sizeof(values));
      return {DType::I32, {2}, storage_.back()};
    }
    const std::int64_t values[2] = {out, in};
    storage_.emplace_back(reinterpret_cast<const std::byte*>(values),
                          reinterpret_cast<const std::byte*>(values) + sizeof(values));
    return {DType::I64, {2}, storage_.back()};
  }

 private:
  Input& input_;
  std::vector<std::vector<std::byte>> storage_;
};

// What dequantize() reads of a weight in GPTQ's layout, each element
// through .at(): qweight [K / P, N], qzeros [G, N / P], scales [G, N] and
// the group of every input.
void read_every_weight(const GptqLayout& layout, const GptqRepacked& packed,
                       const std::optional<TensorView>& bias) {
  const quire::kernels::LinearWeight weight = host_linear_weight(layout, packed, bias);
  quire::kernels::check_linear_descriptor(weight);
  if (!layout.g_idx.empty()) {
    quire::kernels::check_gptq_group_indices(layout.g_idx.data(), layout.in_features,
                                             layout.groups);
  }
  if (layout.in_features * layout.out_features > kMostElements) return;
  const std::int64_t per_word = 32 / layout.bits;
  const std::int64_t columns = layout.out_features;
  const std::size_t scale_size = quire::kernels::dtype_size(layout.scale_dtype);
  std::uint64_t checksum = 0;
  for (std::int64_t k = 0; k < layout.in_features; ++k) {
    const std::int64_t g =
        layout.g_idx.empty() ? k / layout.group_size : layout.g_idx.at(std::size_t(k));
    for (std::int64_t n = 0; n < columns; ++n) {
      checksum += packed.qweight.at(std::size_t((k / per_word) * columns + n));
      if (!layout.symmetric) {
        checksum += packed.qzeros.at(std::size_t(g * (columns / per_word) + n / per_word));
      }
      checksum += std::uint64_t(packed.scales.at(std::size_t(g * columns + n) * scale_size));
    }
  }
  // Nothing to compare against; the reads are the test.
  static volatile std::uint64_t sink;
  sink = checksum;
}

void run(Input& input) {
  Tensors tensors(input);
  const int format = input.byte() % 4;
  LinearShape shape;
  if (input.flag()) shape = {input.pick(kDimensions), input.pick(kDimensions)};
  const std::array<int, 6> widths = {4, 8, 4, 8, 3, 2};
  const std::array<int, 7> groups = {32, 8, 16, 64, 128, 0, -1};
  if (format == 0) {
    GptqTensors t;
    auto qweight = tensors.make(DType::I32);
    auto qzeros = tensors.make(DType::I32);
    auto scales = tensors.make(DType::F16);
    if (!qweight || !qzeros || !scales) return;
    t = {*qweight, *qzeros, *scales, std::nullopt, std::nullopt};
    if (input.flag()) t.g_idx = tensors.make(DType::I32);
    const GptqOptions options{input.pick(widths), input.flag()};
    const GptqLayout layout = describe_gptq("fuzz", t, options, shape);
    // GPTQ runs in place: the descriptor points into the file's tensors.
    quire::kernels::check_linear_descriptor(host_linear_weight(layout, t));
    if (!layout.g_idx.empty()) {
      quire::kernels::check_gptq_group_indices(layout.g_idx.data(), layout.in_features,
                                               layout.groups);
    }
    return;
  }
  if (format == 1) {
    AwqTensors t;
    auto qweight = tensors.make(DType::I32);
    auto qzeros = tensors.make(DType::I32);
    auto scales = tensors.make(DType::F16);
    if (!qweight || !qzeros || !scales) return;
    t = {*qweight, *qzeros, *scales, std::nullopt};
    if (input.flag()) t.bias = tensors.make(DType::F16);
    const AwqOptions options{input.pick(widths), input.pick(groups)};
    const GptqLayout layout = describe_awq("fuzz", t, options, shape);
    read_every_weight(layout, repack_awq(layout, t), t.bias);
    return;
  }
  if (format == 2) {
    PackQuantizedScheme scheme;
    scheme.bits = input.pick(widths);
    scheme.symmetric = input.flag();
    scheme.group_size = input.pick(groups);
    scheme.per_channel = scheme.group_size == 0;
    scheme.group_actorder = input.flag();
    PackQuantizedTensors t;
    auto packed = tensors.make(DType::I32);
    auto scale = tensors.make(DType::BF16);
    if (!packed || !scale) return;
    t.weight_packed = *packed;
    t.weight_scale = *scale;
    t.weight_shape = input.flag()
                         ? tensors.dimensions(input.pick(kDimensions), input.pick(kDimensions))
                         : tensors.dimensions(std::int64_t{input.byte()} << 40, -8);
    if (input.flag()) t.weight_zero_point = tensors.make(input.flag() ? DType::I32 : DType::I8);
    if (input.flag()) t.weight_g_idx = tensors.make(DType::I32);
    if (input.flag()) t.bias = tensors.make(DType::F32);
    const GptqLayout layout = describe_pack_quantized("fuzz", t, scheme, shape);
    read_every_weight(layout, repack_pack_quantized(layout, t), t.bias);
    return;
  }
  NaiveQuantizedScheme scheme;
  scheme.bits = input.pick(std::array<int, 4>{8, 4, 8, 9});
  scheme.symmetric = input.flag();
  scheme.strategy = NaiveQuantizedScheme::Strategy(input.byte() % 3);
  scheme.group_size = input.pick(groups);
  scheme.group_actorder = input.flag();
  NaiveQuantizedTensors t;
  auto weight = tensors.make(DType::I8);
  auto scale = tensors.make(DType::F16);
  if (!weight || !scale) return;
  t.weight = *weight;
  t.weight_scale = *scale;
  if (input.flag()) t.weight_zero_point = tensors.make(DType::I8);
  if (input.flag()) t.weight_g_idx = tensors.make(DType::I32);
  const GptqLayout layout = describe_naive_quantized("fuzz", t, scheme, shape);
  read_every_weight(layout, repack_naive_quantized(layout, t), t.bias);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Input input(data, size);
  try {
    run(input);
  } catch (const quire::engine::ModelError&) {
  }
  return 0;
}
