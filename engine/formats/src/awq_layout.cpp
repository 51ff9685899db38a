// AutoAWQ's GEMM checkpoints (awq/modules/linear/gemm.py, WQLinear_GEMM):
// qweight [K, N / 8] and qzeros [G, N / 8] pack eight 4-bit values of
// consecutive output columns into a word in the order of
// awq/utils/packing_utils.py's AWQ_ORDER; W[n, k] = (q - z) * s per group of
// K / G consecutive inputs. At load they are rewritten into GPTQ's layout,
// whose product is the same arithmetic.

#include "quire/engine/formats/awq_layout.h"

#include <string>

#include "quire/engine/model_error.h"
#include "tensor_checks.h"

namespace quire::engine::formats {
namespace {

using kernels::DType;
using std::to_string;

std::uint32_t awq_word(const TensorView& view, std::int64_t index) {
  return static_cast<std::uint32_t>(detail::read_index(view, index));
}

}  // namespace

GptqLayout describe_awq(std::string_view key, const AwqTensors& tensors, const AwqOptions& options,
                        const LinearShape& shape) {
  const detail::LayerChecks checks(key, "AWQ");
  if (options.bits != 4) {
    throw ModelError(std::string(key) + ": AWQ with " + to_string(options.bits) +
                     " bits is not supported; AutoAWQ's GEMM layout, which Quire runs, is 4-bit");
  }
  checks.expect("qweight", tensors.qweight, {DType::I32}, 2);
  checks.expect("qzeros", tensors.qzeros, {DType::I32}, 2);
  checks.expect("scales", tensors.scales, {DType::F16}, 2);

  GptqLayout layout;
  layout.bits = 4;
  layout.exact_zeros = true;
  layout.in_features = tensors.qweight.shape[0];
  layout.out_features = tensors.qweight.shape[1] * 8;
  if (layout.in_features == 0 || layout.out_features == 0) {
    checks.fail("qweight has shape " + format_shape(tensors.qweight.shape) +
                "; a layer needs inputs and outputs");
  }
  if (layout.in_features > INT32_MAX) {
    checks.fail("qweight has shape " + format_shape(tensors.qweight.shape) +
                ", more rows than Quire supports");
  }
  if (shape.in_features > 0 && shape.in_features != layout.in_features) {
    checks.fail_config("qweight has " + to_string(layout.in_features) +
                       " rows, one per input, but the layer has " + to_string(shape.in_features) +
                       " inputs");
  }
  if (shape.out_features > 0 && shape.out_features != layout.out_features) {
    checks.fail_config("qweight has " + to_string(tensors.qweight.shape[1]) +
                       " columns, which hold " + to_string(layout.out_features) +
                       " outputs, but the layer has " + to_string(shape.out_features));
  }
  if (layout.in_features % 8 != 0) {
    checks.fail("qweight has " + to_string(layout.in_features) +
                " rows; Quire runs AWQ layers whose inputs are a multiple of 8");
  }
  const std::int64_t groups = tensors.qzeros.shape[0];
  if (groups < 1 || layout.in_features % groups != 0) {
    checks.fail("qzeros has " + to_string(groups) + " groups, which do not divide the " +
                to_string(layout.in_features) + " inputs into equal groups");
  }
  const std::vector<std::int64_t> zeros_shape = {groups, tensors.qweight.shape[1]};
  if (tensors.qzeros.shape != zeros_shape) {
    checks.fail("qzeros has shape " + format_shape(tensors.qzeros.shape) + "; " +
                to_string(layout.out_features) + " outputs need " + format_shape(zeros_shape));
  }
  const std::vector<std::int64_t> scales_shape = {groups, layout.out_features};
  if (tensors.scales.shape != scales_shape) {
    checks.fail("scales has shape " + format_shape(tensors.scales.shape) + "; qzeros says " +
                format_shape(scales_shape));
  }
  layout.groups = static_cast<int>(groups);
  layout.group_size = static_cast<int>(layout.in_features / groups);
  const std::int64_t configured = options.group_size > 0     ? options.group_size
                                  : options.group_size == -1 ? layout.in_features
                                                             : 0;
  if (configured != 0 && configured != layout.group_size) {
    checks.fail_config("qzeros has " + to_string(groups) + " groups of " +
                       to_string(layout.group_size) + " inputs, but quantization_config's " +
                       "group_size is " + to_string(options.group_size));
  }
  if (tensors.bias) checks.expect_bias(*tensors.bias, layout.out_features);
  return layout;
}

GptqRepacked repack_awq(const GptqLayout& layout, const AwqTensors& tensors) {
  const std::int64_t in = layout.in_features;
  const std::int64_t out = layout.out_features;
  const std::int64_t packed_columns = out / 8;
  GptqRepacked packed;
  packed.qweight.assign(std::size_t(in / 8 * out), 0u);
  packed.qzeros.assign(std::size_t(layout.groups * packed_columns), 0u);
  for (std::int64_t k = 0; k < in; ++k) {
    std::uint32_t* row = packed.qweight.data() + (k / 8) * out;
    for (std::int64_t w = 0; w < packed_columns; ++w) {
      const std::uint32_t word = awq_word(tensors.qweight, k * packed_columns + w);
      for (int slot = 0; slot < 8; ++slot) {
        const std::uint32_t q = (word >> (4 * slot)) & 15u;
        row[w * 8 + kAwqOrder[slot]] |= q << (4 * (k % 8));
      }
    }
  }
  for (std::int64_t g = 0; g < layout.groups; ++g) {
    for (std::int64_t w = 0; w < packed_columns; ++w) {
      const std::uint32_t word = awq_word(tensors.qzeros, g * packed_columns + w);
      for (int slot = 0; slot < 8; ++slot) {
        const std::uint32_t z = (word >> (4 * slot)) & 15u;
        detail::pack_value(packed.qzeros.data() + g * packed_columns, w * 8 + kAwqOrder[slot], z,
                           4);
      }
    }
  }
  packed.scales.assign(tensors.scales.bytes.begin(), tensors.scales.bytes.end());
  return packed;
}

}  // namespace quire::engine::formats
