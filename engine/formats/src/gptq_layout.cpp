#include "quire/engine/formats/gptq_layout.h"

#include <string>

#include "host_pointers.h"
#include "quire/engine/model_error.h"
#include "tensor_checks.h"

namespace quire::engine::formats {
namespace {

using kernels::DType;
using std::to_string;

// g_idx as the product needs it: empty when every input is in group
// k / group_size, or when all entries are zero (some quantizers write zeros for
// "no act-order"; exllamav2 reads it so too).
std::vector<std::int32_t> read_group_index(const detail::LayerChecks& checks,
                                           const TensorView& view, const GptqLayout& layout) {
  std::vector<std::int32_t> g_idx(std::size_t(layout.in_features));
  bool sequential = true;
  bool all_zero = true;
  for (std::int64_t k = 0; k < layout.in_features; ++k) {
    const std::int64_t group = detail::read_index(view, k);
    if (group < 0 || group >= layout.groups) {
      checks.fail("g_idx[" + to_string(k) + "] is " + to_string(group) + ", but there are " +
                  to_string(layout.groups) + " groups");
    }
    g_idx[std::size_t(k)] = static_cast<std::int32_t>(group);
    sequential = sequential && group == k / layout.group_size;
    all_zero = all_zero && group == 0;
  }
  if (sequential || all_zero) g_idx.clear();
  return g_idx;
}

}  // namespace

namespace {

[[noreturn]] void refuse_bits(std::string_view key, std::int64_t bits) {
  throw ModelError(std::string(key) + ": GPTQ with " + to_string(bits) +
                   " bits is not supported; Quire runs 4- and 8-bit GPTQ");
}

// The width: from qweight's rows when the layer's inputs are known (a file's
// per-module overrides may differ from its default), else the config's.
int gptq_bits(std::string_view key, const detail::LayerChecks& checks, const GptqTensors& tensors,
              const GptqOptions& options, const LinearShape& shape) {
  const std::int64_t rows = tensors.qweight.shape[0];
  if (shape.in_features <= 0) {
    if (options.bits != 4 && options.bits != 8) refuse_bits(key, options.bits);
    return options.bits;
  }
  const std::int64_t in = shape.in_features;
  if (rows > 0 && rows * 32 % in == 0) {
    const std::int64_t bits = rows * 32 / in;
    if (bits == 4 || bits == 8) return static_cast<int>(bits);
    if (bits >= 1 && bits < 16) refuse_bits(key, bits);
  }
  checks.fail_config("qweight has " + to_string(rows) + " rows, which hold " + to_string(rows * 8) +
                     " 4-bit or " + to_string(rows * 4) + " 8-bit inputs, but the layer has " +
                     to_string(in));
}

}  // namespace

GptqLayout describe_gptq(std::string_view key, const GptqTensors& tensors,
                         const GptqOptions& options, const LinearShape& shape) {
  const detail::LayerChecks checks(key, "GPTQ");
  checks.expect("qweight", tensors.qweight, {DType::I32}, 2);
  checks.expect("qzeros", tensors.qzeros, {DType::I32}, 2);
  checks.expect("scales", tensors.scales, {DType::F16}, 2);
  if (tensors.g_idx) checks.expect("g_idx", *tensors.g_idx, {DType::I32}, 1);

  GptqLayout layout;
  layout.exact_zeros = options.exact_zeros;
  layout.bits = gptq_bits(key, checks, tensors, options, shape);
  const int per_word = 32 / layout.bits;
  layout.in_features = tensors.qweight.shape[0] * per_word;
  layout.out_features = tensors.qweight.shape[1];
  if (layout.in_features == 0 || layout.out_features == 0) {
    checks.fail("qweight has shape " + format_shape(tensors.qweight.shape) +
                "; a layer needs inputs and outputs");
  }
  if (layout.in_features > INT32_MAX) {
    checks.fail("qweight has shape " + format_shape(tensors.qweight.shape) +
                ", more rows than Quire supports");
  }
  if (layout.in_features % 8 != 0) {
    checks.fail("qweight has " + to_string(tensors.qweight.shape[0]) + " rows, which hold " +
                to_string(layout.in_features) +
                " inputs; Quire runs GPTQ layers whose inputs are a multiple of 8");
  }
  if (shape.out_features > 0 && shape.out_features != layout.out_features) {
    checks.fail_config("qweight has " + to_string(layout.out_features) +
                       " columns, but the layer has " + to_string(shape.out_features) + " outputs");
  }
  if (layout.out_features % 8 != 0) {
    checks.fail("qweight has " + to_string(layout.out_features) +
                " columns; zero points are packed " + to_string(per_word) +
                " to a word, and Quire needs outputs in multiples of 8");
  }
  const std::int64_t groups = tensors.qzeros.shape[0];
  if (groups < 1 || groups > layout.in_features) {
    checks.fail("qzeros has " + to_string(groups) + " groups for " + to_string(layout.in_features) +
                " inputs");
  }
  const std::vector<std::int64_t> zeros_shape = {groups, layout.out_features / per_word};
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
  std::int64_t group_size = 1;
  while (group_size * groups < layout.in_features)
    group_size *= 2;
  layout.group_size = static_cast<int>(group_size);  // <= K, which fits an int
  if (tensors.g_idx) {
    if (tensors.g_idx->shape[0] != layout.in_features) {
      checks.fail("g_idx has " + to_string(tensors.g_idx->shape[0]) + " entries for " +
                  to_string(layout.in_features) + " inputs");
    }
    layout.g_idx = read_group_index(checks, *tensors.g_idx, layout);
  }
  if (tensors.bias) checks.expect_bias(*tensors.bias, layout.out_features);
  return layout;
}

kernels::LinearWeight host_linear_weight(const GptqLayout& layout, const GptqTensors& tensors) {
  kernels::GptqWeight gptq;
  gptq.qweight = detail::host_pointer<std::uint32_t>(tensors.qweight, "qweight");
  gptq.qzeros = detail::host_pointer<std::uint32_t>(tensors.qzeros, "qzeros");
  gptq.scales = detail::host_pointer<std::uint16_t>(tensors.scales, "scales");
  gptq.bits = layout.bits;
  gptq.g_idx = layout.g_idx.empty() ? nullptr : layout.g_idx.data();
  gptq.groups = layout.groups;
  gptq.group_size = layout.group_size;
  gptq.exact_zeros = layout.exact_zeros;
  kernels::LinearWeight weight;
  weight.in_features = layout.in_features;
  weight.out_features = layout.out_features;
  weight.format = gptq;
  detail::set_host_bias(weight, tensors.bias);
  return weight;
}

}  // namespace quire::engine::formats
