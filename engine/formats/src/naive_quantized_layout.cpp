// compressed-tensors' naive-quantized integer checkpoints, read after
// compressors/naive_quantized and quantization/lifecycle/forward.py: int8
// weights, scales (and zero points) per tensor, output row or group. At load
// they become GPTQ's 8-bit layout: q + 128 and z + 128 are bytes, and
// (q + 128) - (z + 128) = q - z, so every weight keeps its value.

#include "quire/engine/formats/naive_quantized_layout.h"

#include <cstring>
#include <string>

#include "group_index.h"
#include "quire/engine/model_error.h"
#include "tensor_checks.h"

namespace quire::engine::formats {
namespace {

using kernels::DType;
using Strategy = NaiveQuantizedScheme::Strategy;
using std::to_string;

std::int8_t read_int8(const TensorView& view, std::int64_t index) {
  return static_cast<std::int8_t>(view.bytes[std::size_t(index)]);
}

// Scale (or zero point) of row n, group g in the file's own shape.
std::int64_t parameter_index(const GptqLayout& layout, Strategy strategy, std::int64_t n,
                             std::int64_t g) {
  switch (strategy) {
    case Strategy::tensor:
      return 0;
    case Strategy::channel:
      return n;
    case Strategy::group:
      break;
  }
  return n * layout.groups + g;
}

void check_range(const detail::LayerChecks& checks, const char* name, const TensorView& view,
                 int bits) {
  const int low = -(1 << (bits - 1));
  const int high = (1 << (bits - 1)) - 1;
  for (std::int64_t i = 0; i < view.elements(); ++i) {
    const int value = read_int8(view, i);
    if (value < low || value > high) {
      checks.fail(std::string(name) + " holds " + to_string(value) + ", outside the " +
                  to_string(bits) + "-bit range " + to_string(low) + ".." + to_string(high));
    }
  }
}

}  // namespace

GptqLayout describe_naive_quantized(std::string_view key, const NaiveQuantizedTensors& tensors,
                                    const NaiveQuantizedScheme& scheme, const LinearShape& shape) {
  const detail::LayerChecks checks(key, "compressed-tensors naive-quantized");
  if (scheme.bits < 1 || scheme.bits > 8) {
    throw ModelError(std::string(key) + ": naive-quantized integers of " + to_string(scheme.bits) +
                     " bits are not supported; Quire runs int8 weights (up to 8 bits)");
  }
  checks.expect("weight", tensors.weight, {DType::I8}, 2);
  const TensorView& scale = tensors.weight_scale;
  checks.expect("weight_scale", scale, {DType::F16, DType::BF16, DType::F32}, scale.shape.size());
  GptqLayout layout;
  layout.bits = 8;
  layout.exact_zeros = true;
  layout.symmetric = scheme.symmetric;
  layout.scale_dtype = scale.dtype;
  layout.out_features = tensors.weight.shape[0];
  layout.in_features = tensors.weight.shape[1];
  if (layout.in_features == 0 || layout.out_features == 0 || layout.in_features > INT32_MAX ||
      layout.out_features > INT32_MAX) {
    checks.fail("weight has shape " + format_shape(tensors.weight.shape) +
                ", not the shape of a layer Quire can run");
  }
  if ((shape.in_features > 0 && shape.in_features != layout.in_features) ||
      (shape.out_features > 0 && shape.out_features != layout.out_features)) {
    checks.fail_config("weight has shape " + format_shape(tensors.weight.shape) +
                       ", but the layer is [" + to_string(shape.out_features) + ", " +
                       to_string(shape.in_features) + "]");
  }
  if (layout.in_features % 8 != 0 || layout.out_features % 8 != 0) {
    checks.fail("weight has shape " + format_shape(tensors.weight.shape) +
                "; Quire runs int8 layers whose inputs and outputs are multiples of 8");
  }
  const std::int64_t in = layout.in_features;
  const std::int64_t out = layout.out_features;
  std::int64_t groups = 1;
  bool scale_fits = false;
  switch (scheme.strategy) {
    case Strategy::tensor:
      scale_fits = scale.elements() == 1 && scale.shape.size() <= 2;
      break;
    case Strategy::channel:
      scale_fits = scale.shape == std::vector<std::int64_t>{out, 1} ||
                   scale.shape == std::vector<std::int64_t>{out};
      break;
    case Strategy::group:
      if (scheme.group_size <= 0) checks.fail_config("the scheme's group_size is not positive");
      if (in > scheme.group_size && in % scheme.group_size != 0) {
        checks.fail_config("the scheme's group_size " + to_string(scheme.group_size) +
                           " does not divide the layer's " + to_string(in) + " inputs");
      }
      groups = in <= scheme.group_size ? 1 : in / scheme.group_size;
      scale_fits = scale.shape == std::vector<std::int64_t>{out, groups};
      break;
  }
  if (!scale_fits) {
    const char* expected = scheme.strategy == Strategy::tensor    ? "one scale ([1])"
                           : scheme.strategy == Strategy::channel ? "one scale per output row"
                                                                  : "one scale per row and group";
    checks.fail("weight_scale has shape " + format_shape(scale.shape) + "; the scheme takes " +
                expected +
                (scheme.strategy == Strategy::group
                     ? ", " + format_shape(std::vector<std::int64_t>{out, groups})
                     : std::string()));
  }
  layout.groups = static_cast<int>(groups);
  layout.group_size = scheme.strategy == Strategy::group ? scheme.group_size : static_cast<int>(in);
  check_range(checks, "weight", tensors.weight, scheme.bits);

  const auto& zero_point = tensors.weight_zero_point;
  if (!scheme.symmetric && !zero_point) {
    checks.fail_config("weight_zero_point is missing, but the scheme is asymmetric");
  }
  if (zero_point) {
    checks.expect("weight_zero_point", *zero_point, {DType::I8}, zero_point->shape.size());
    if (zero_point->shape != scale.shape) {
      checks.fail("weight_zero_point has shape " + format_shape(zero_point->shape) +
                  "; it has one zero point per scale, " + format_shape(scale.shape));
    }
    check_range(checks, "weight_zero_point", *zero_point, scheme.bits);
    // Older compressed-tensors wrote the zeros of symmetric schemes too.
    for (std::int64_t i = 0; scheme.symmetric && i < zero_point->elements(); ++i) {
      if (read_int8(*zero_point, i) != 0) {
        checks.fail_config("weight_zero_point holds " + to_string(read_int8(*zero_point, i)) +
                           ", but the scheme is symmetric (every zero point is 0)");
      }
    }
  }
  if (tensors.weight_g_idx && scheme.strategy == Strategy::group) {
    layout.g_idx = detail::read_even_group_index(checks, "weight_g_idx", *tensors.weight_g_idx, in,
                                                 layout.groups, layout.group_size);
  } else if (tensors.weight_g_idx) {
    checks.fail_config("weight_g_idx is present, but the scheme has no groups of inputs");
  } else if (scheme.group_actorder) {
    checks.fail_config("weight_g_idx is missing, but the scheme's actorder is \"group\"");
  }
  if (tensors.bias) checks.expect_bias(*tensors.bias, layout.out_features);
  return layout;
}

GptqRepacked repack_naive_quantized(const GptqLayout& layout,
                                    const NaiveQuantizedTensors& tensors) {
  const std::int64_t in = layout.in_features;
  const std::int64_t out = layout.out_features;
  const Strategy strategy = layout.groups > 1                      ? Strategy::group
                            : tensors.weight_scale.elements() == 1 ? Strategy::tensor
                                                                   : Strategy::channel;
  GptqRepacked packed;
  packed.qweight.assign(std::size_t(in / 4 * out), 0u);
  for (std::int64_t n = 0; n < out; ++n) {
    for (std::int64_t k = 0; k < in; ++k) {
      const auto value = static_cast<std::uint32_t>(read_int8(tensors.weight, n * in + k) + 128);
      packed.qweight[std::size_t((k / 4) * out + n)] |= value << (8 * (k % 4));
    }
  }
  const std::int64_t groups = layout.groups;
  if (!layout.symmetric) {
    packed.qzeros.assign(std::size_t(groups * out / 4), 0u);
    for (std::int64_t g = 0; g < groups; ++g) {
      for (std::int64_t n = 0; n < out; ++n) {
        const std::int64_t i = parameter_index(layout, strategy, n, g);
        const auto zero =
            static_cast<std::uint32_t>(read_int8(*tensors.weight_zero_point, i) + 128);
        detail::pack_value(packed.qzeros.data() + g * out / 4, n, zero, 8);
      }
    }
  }
  const std::size_t size = kernels::dtype_size(layout.scale_dtype);
  packed.scales.resize(std::size_t(groups * out) * size);
  for (std::int64_t g = 0; g < groups; ++g) {
    for (std::int64_t n = 0; n < out; ++n) {
      const std::int64_t i = parameter_index(layout, strategy, n, g);
      std::memcpy(packed.scales.data() + std::size_t(g * out + n) * size,
                  tensors.weight_scale.bytes.data() + std::size_t(i) * size, size);
    }
  }
  return packed;
}

}  // namespace quire::engine::formats
