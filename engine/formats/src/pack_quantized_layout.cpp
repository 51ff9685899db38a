// compressed-tensors' pack-quantized checkpoints, read after
// compressors/pack_quantized/ (base.py, helpers.py) and
// quantization/lifecycle/forward.py's dequantize. For 4 and 8 bits, P values
// fill a word exactly, so weight_packed [N, K / P] is GPTQ's qweight
// [K / P, N] transposed word for word, and a packed weight_zero_point
// [N / P, G] GPTQ's qzeros [G, N / P]; both carry the 2^(b-1) offset that
// makes a symmetric zero point 2^(b-1) and an asymmetric one exact.

#include "quire/engine/formats/pack_quantized_layout.h"

#include <cstring>
#include <string>

#include "group_index.h"
#include "quire/engine/model_error.h"
#include "tensor_checks.h"

namespace quire::engine::formats {
namespace {

using kernels::DType;
using std::to_string;

std::uint32_t packed_word(const TensorView& view, std::int64_t index) {
  return static_cast<std::uint32_t>(detail::read_index(view, index));
}

// The zero points as signed values, [N, G]: packed I32 words hold them
// offset by 2^(b-1) along N, unpacked I8 ones as they are.
std::vector<int> zero_points(const TensorView& view, int bits) {
  std::vector<int> values;
  if (view.dtype == DType::I8) {
    for (const std::byte value : view.bytes)
      values.push_back(static_cast<std::int8_t>(value));
    return values;
  }
  const std::int64_t groups = view.shape[1];
  const int per_word = 32 / bits;
  values.resize(std::size_t(view.shape[0] * per_word * groups));
  for (std::int64_t w = 0; w < view.shape[0]; ++w) {
    for (std::int64_t g = 0; g < groups; ++g) {
      const std::uint32_t word = packed_word(view, w * groups + g);
      for (int j = 0; j < per_word; ++j) {
        const auto stored = static_cast<int>((word >> (bits * j)) & ((1u << bits) - 1u));
        values[std::size_t((w * per_word + j) * groups + g)] = stored - (1 << (bits - 1));
      }
    }
  }
  return values;
}

std::int64_t read_dimension(const TensorView& view, std::int64_t index) {
  if (view.dtype == DType::I32) return detail::read_index(view, index);
  std::int64_t value = 0;
  std::memcpy(&value, view.bytes.data() + index * 8, 8);
  return value;
}

// The groups the scheme gives K inputs.
std::int64_t group_count(const detail::LayerChecks& checks, const PackQuantizedScheme& scheme,
                         std::int64_t in) {
  if (scheme.per_channel) return 1;
  if (scheme.group_size <= 0) checks.fail_config("the scheme's group_size is not positive");
  // compressed-tensors quantizes fewer inputs than one group as one group.
  if (in <= scheme.group_size) return 1;
  if (in % scheme.group_size != 0) {
    checks.fail_config("the scheme's group_size " + to_string(scheme.group_size) +
                       " does not divide the layer's " + to_string(in) + " inputs");
  }
  return in / scheme.group_size;
}

}  // namespace

GptqLayout describe_pack_quantized(std::string_view key, const PackQuantizedTensors& tensors,
                                   const PackQuantizedScheme& scheme, const LinearShape& shape) {
  const detail::LayerChecks checks(key, "compressed-tensors pack-quantized");
  if (scheme.bits != 4 && scheme.bits != 8) {
    throw ModelError(std::string(key) + ": pack-quantized weights of " + to_string(scheme.bits) +
                     " bits are not supported; Quire runs 4- and 8-bit ones (W4A16, W8A16)");
  }
  checks.expect("weight_packed", tensors.weight_packed, {DType::I32}, 2);
  checks.expect("weight_scale", tensors.weight_scale, {DType::F16, DType::BF16, DType::F32}, 2);
  checks.expect("weight_shape", tensors.weight_shape, {DType::I64, DType::I32}, 1);
  if (tensors.weight_shape.shape[0] != 2) {
    checks.fail("weight_shape has " + to_string(tensors.weight_shape.shape[0]) +
                " elements; it holds the two dimensions of the unpacked weight");
  }
  GptqLayout layout;
  layout.bits = scheme.bits;
  layout.exact_zeros = true;
  layout.symmetric = scheme.symmetric;
  layout.scale_dtype = tensors.weight_scale.dtype;
  layout.out_features = read_dimension(tensors.weight_shape, 0);
  layout.in_features = read_dimension(tensors.weight_shape, 1);
  const std::string unpacked =
      "[" + to_string(layout.out_features) + ", " + to_string(layout.in_features) + "]";
  if (layout.in_features <= 0 || layout.out_features <= 0 || layout.in_features > INT32_MAX ||
      layout.out_features > INT32_MAX) {
    checks.fail("weight_shape is " + unpacked + ", not the shape of a layer Quire can run");
  }
  if ((shape.in_features > 0 && shape.in_features != layout.in_features) ||
      (shape.out_features > 0 && shape.out_features != layout.out_features)) {
    checks.fail_config("weight_shape is " + unpacked + " (outputs, inputs), but the layer is [" +
                       to_string(shape.out_features) + ", " + to_string(shape.in_features) + "]");
  }
  if (layout.in_features % 8 != 0 || layout.out_features % 8 != 0) {
    checks.fail("weight_shape is " + unpacked +
                "; Quire runs pack-quantized layers whose inputs and outputs are multiples of 8");
  }
  const int per_word = 32 / scheme.bits;
  const std::vector<std::int64_t> packed_shape = {layout.out_features,
                                                  layout.in_features / per_word};
  if (tensors.weight_packed.shape != packed_shape) {
    const int other = scheme.bits == 4 ? 8 : 4;
    const bool other_width =
        tensors.weight_packed.shape ==
        std::vector<std::int64_t>{layout.out_features, layout.in_features * other / 32};
    checks.fail(
        "weight_packed has shape " + format_shape(tensors.weight_packed.shape) + "; " + unpacked +
        " in " + to_string(scheme.bits) + "-bit values needs " + format_shape(packed_shape) +
        (other_width
             ? " (it holds " + to_string(other) + "-bit values: the config's num_bits disagrees)"
             : std::string()));
  }
  const std::int64_t groups = group_count(checks, scheme, layout.in_features);
  const std::vector<std::int64_t> scale_shape = {layout.out_features, groups};
  if (tensors.weight_scale.shape != scale_shape) {
    checks.fail("weight_scale has shape " + format_shape(tensors.weight_scale.shape) + "; " +
                (scheme.per_channel ? std::string("one scale per output row")
                                    : "groups of " + to_string(scheme.group_size) + " inputs") +
                " need " + format_shape(scale_shape));
  }
  layout.groups = static_cast<int>(groups);
  layout.group_size = scheme.per_channel ? static_cast<int>(layout.in_features) : scheme.group_size;

  const auto& zero_point = tensors.weight_zero_point;
  if (!scheme.symmetric && !zero_point) {
    checks.fail_config("weight_zero_point is missing, but the scheme is asymmetric");
  }
  if (zero_point) {
    checks.expect("weight_zero_point", *zero_point, {DType::I32, DType::I8}, 2);
    const std::vector<std::int64_t> expected =
        zero_point->dtype == DType::I32
            ? std::vector<std::int64_t>{layout.out_features / per_word, groups}
            : std::vector<std::int64_t>{layout.out_features, groups};
    if (zero_point->shape != expected) {
      checks.fail("weight_zero_point has shape " + format_shape(zero_point->shape) + "; " +
                  (zero_point->dtype == DType::I32 ? "packed" : "unpacked") + " zero points of " +
                  to_string(layout.out_features) + " outputs in " + to_string(groups) +
                  " groups need " + format_shape(expected));
    }
    const std::vector<int> values = zero_points(*zero_point, scheme.bits);
    const int low = -(1 << (scheme.bits - 1));
    const int high = (1 << (scheme.bits - 1)) - 1;
    for (const int value : values) {
      if (value < low || value > high) {
        checks.fail("weight_zero_point holds " + to_string(value) + ", outside the " +
                    to_string(scheme.bits) + "-bit range " + to_string(low) + ".." +
                    to_string(high));
      }
      // Older compressed-tensors wrote the zeros of symmetric schemes too.
      if (scheme.symmetric && value != 0) {
        checks.fail_config("weight_zero_point holds " + to_string(value) +
                           ", but the scheme is symmetric (every zero point is 0)");
      }
    }
  }
  if (tensors.weight_g_idx) {
    layout.g_idx =
        detail::read_even_group_index(checks, "weight_g_idx", *tensors.weight_g_idx,
                                      layout.in_features, layout.groups, layout.group_size);
  } else if (scheme.group_actorder) {
    checks.fail_config("weight_g_idx is missing, but the scheme's actorder is \"group\"");
  }
  if (tensors.bias) checks.expect_bias(*tensors.bias, layout.out_features);
  return layout;
}

GptqRepacked repack_pack_quantized(const GptqLayout& layout, const PackQuantizedTensors& tensors) {
  const std::int64_t in = layout.in_features;
  const std::int64_t out = layout.out_features;
  const std::int64_t per_word = 32 / layout.bits;
  const std::int64_t word_rows = in / per_word;
  GptqRepacked packed;
  packed.qweight.resize(std::size_t(word_rows * out));
  for (std::int64_t n = 0; n < out; ++n) {
    for (std::int64_t w = 0; w < word_rows; ++w)
      packed.qweight[std::size_t(w * out + n)] =
          packed_word(tensors.weight_packed, n * word_rows + w);
  }
  const std::int64_t groups = layout.groups;
  if (!layout.symmetric) {
    const TensorView& zero_point = *tensors.weight_zero_point;
    const std::int64_t zero_words = out / per_word;
    packed.qzeros.assign(std::size_t(groups * zero_words), 0u);
    for (std::int64_t g = 0; g < groups; ++g) {
      std::uint32_t* row = packed.qzeros.data() + g * zero_words;
      if (zero_point.dtype == DType::I32) {
        for (std::int64_t w = 0; w < zero_words; ++w)
          row[w] = packed_word(zero_point, w * groups + g);
        continue;
      }
      // Unpacked signed zero points (written before compressed-tensors packed
      // them): the same offset as the values.
      for (std::int64_t n = 0; n < out; ++n) {
        const auto z = static_cast<std::int8_t>(zero_point.bytes[std::size_t(n * groups + g)]);
        detail::pack_value(row, n, static_cast<std::uint32_t>(z + (1 << (layout.bits - 1))),
                           layout.bits);
      }
    }
  }
  const std::size_t size = kernels::dtype_size(layout.scale_dtype);
  const std::span<const std::byte> scales = tensors.weight_scale.bytes;
  packed.scales.resize(std::size_t(groups * out) * size);
  for (std::int64_t n = 0; n < out; ++n) {
    for (std::int64_t g = 0; g < groups; ++g) {
      std::memcpy(packed.scales.data() + std::size_t(g * out + n) * size,
                  scales.data() + std::size_t(n * groups + g) * size, size);
    }
  }
  return packed;
}

}  // namespace quire::engine::formats
