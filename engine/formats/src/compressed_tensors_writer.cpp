#include "quire/engine/formats/compressed_tensors_writer.h"

#include <stdexcept>
#include <string>

#include "int_group_scale.h"
#include "quire/engine/formats/gptq_repacked.h"
#include "quire/kernels/cpu/half.h"
#include "writer_support.h"

namespace quire::engine::formats {
namespace {

using kernels::DType;

std::vector<std::byte> scale_bytes(const std::vector<float>& scales, DType dtype) {
  if (dtype == DType::F32) return detail::to_bytes(scales);
  std::vector<std::uint16_t> halves;
  for (const float scale : scales)
    halves.push_back(dtype == DType::BF16 ? kernels::float_to_bf16(scale)
                                          : kernels::float_to_half(scale));
  return detail::to_bytes(halves);
}

std::vector<std::byte> int8_bytes(const std::vector<std::int8_t>& values) {
  return detail::to_bytes(values);
}

}  // namespace

namespace detail {

void check_int_layer(std::int64_t out, std::int64_t in, const IntQuantizeOptions& options) {
  const std::int64_t group_size = options.group_size == 0 ? in : options.group_size;
  const bool packable = options.bits >= 1 && options.bits <= 8;
  if (!packable || in % 8 != 0 || out % 8 != 0 || group_size <= 0 || in % group_size != 0) {
    throw std::invalid_argument("integer layer of " + std::to_string(out) + " x " +
                                std::to_string(in) + " at " + std::to_string(options.bits) +
                                " bits in groups of " + std::to_string(options.group_size));
  }
}

}  // namespace detail

IntQuantized quantize_ints(std::span<const float> weight, std::int64_t out, std::int64_t in,
                           const IntQuantizeOptions& options) {
  detail::check_matrix(weight, out, in);
  detail::check_int_layer(out, in, options);
  const std::int64_t group_size = options.group_size == 0 ? in : options.group_size;
  IntQuantized q;
  q.out_features = out;
  q.in_features = in;
  q.groups = in / group_size;
  // members[g * group_size + i]: the inputs of group g.
  const std::vector<std::int32_t> members = detail::seeded_permutation(in, options.actorder_seed);
  if (options.actorder_seed) {
    q.g_idx.resize(std::size_t(in));
    for (std::int64_t i = 0; i < in; ++i)
      q.g_idx[std::size_t(members[std::size_t(i)])] = static_cast<std::int32_t>(i / group_size);
  }
  q.values.resize(std::size_t(out * in));
  q.scales.resize(std::size_t(out * q.groups));
  q.zeros.resize(std::size_t(out * q.groups));
  for (std::int64_t n = 0; n < out; ++n) {
    const float* row = weight.data() + n * in;
    for (std::int64_t g = 0; g < q.groups; ++g) {
      const std::int32_t* group = members.data() + g * group_size;
      double min = 0.0;
      double max = 0.0;
      for (std::int64_t i = 0; i < group_size; ++i) {
        min = std::min(min, double(row[group[i]]));
        max = std::max(max, double(row[group[i]]));
      }
      const detail::IntGroupScale scale = detail::int_group_scale(min, max, options);
      q.scales[std::size_t(n * q.groups + g)] = scale.scale;
      q.zeros[std::size_t(n * q.groups + g)] = static_cast<std::int8_t>(scale.zero);
      for (std::int64_t i = 0; i < group_size; ++i) {
        const std::int64_t k = group[i];
        q.values[std::size_t(n * in + k)] = static_cast<std::int8_t>(scale.quantize(row[k]));
      }
    }
  }
  return q;
}

std::vector<NamedTensor> quantize_pack_quantized(std::span<const float> weight,
                                                 std::int64_t out_features,
                                                 std::int64_t in_features,
                                                 const IntQuantizeOptions& options) {
  if (options.bits != 4 && options.bits != 8) {
    throw std::invalid_argument("pack-quantized weights of " + std::to_string(options.bits) +
                                " bits");
  }
  return pack_quantized_tensors(quantize_ints(weight, out_features, in_features, options), options);
}

std::vector<NamedTensor> pack_quantized_tensors(const IntQuantized& q,
                                                const IntQuantizeOptions& options) {
  if (options.bits != 4 && options.bits != 8) {
    throw std::invalid_argument("pack-quantized weights of " + std::to_string(options.bits) +
                                " bits");
  }
  const std::int64_t out_features = q.out_features;
  const std::int64_t in_features = q.in_features;
  const int bits = options.bits;
  const std::int64_t per_word = 32 / bits;
  const std::uint32_t offset = 1u << (bits - 1);
  // compressors/pack_quantized/helpers.py pack_to_int32: q + 2^(b-1), low bits first.
  std::vector<std::uint32_t> packed(std::size_t(out_features * in_features / per_word), 0u);
  for (std::int64_t n = 0; n < out_features; ++n) {
    for (std::int64_t k = 0; k < in_features; ++k) {
      const auto value = static_cast<std::uint32_t>(q.values[std::size_t(n * in_features + k)] +
                                                    static_cast<int>(offset));
      detail::pack_value(packed.data() + n * (in_features / per_word), k, value, bits);
    }
  }
  const std::vector<std::int64_t> scale_shape = {out_features, q.groups};
  std::vector<NamedTensor> tensors = {
      {"weight_packed",
       DType::I32,
       {out_features, in_features / per_word},
       detail::to_bytes(packed)},
      {"weight_scale", options.scale_dtype, scale_shape,
       scale_bytes(q.scales, options.scale_dtype)},
      {"weight_shape",
       DType::I64,
       {2},
       detail::to_bytes(std::vector<std::int64_t>{out_features, in_features})}};
  if (!options.symmetric) {
    // Packed along the outputs (packed_dim 0): word [n / P, g].
    std::vector<std::uint32_t> zeros(std::size_t(out_features / per_word * q.groups), 0u);
    for (std::int64_t n = 0; n < out_features; ++n) {
      for (std::int64_t g = 0; g < q.groups; ++g) {
        const auto value = static_cast<std::uint32_t>(q.zeros[std::size_t(n * q.groups + g)] +
                                                      static_cast<int>(offset));
        zeros[std::size_t((n / per_word) * q.groups + g)] |= value << (bits * (n % per_word));
      }
    }
    tensors.push_back({"weight_zero_point",
                       DType::I32,
                       {out_features / per_word, q.groups},
                       detail::to_bytes(zeros)});
  }
  if (!q.g_idx.empty()) {
    tensors.push_back({"weight_g_idx", DType::I32, {in_features}, detail::to_bytes(q.g_idx)});
  }
  return tensors;
}

std::vector<NamedTensor> quantize_naive_int8(std::span<const float> weight,
                                             std::int64_t out_features, std::int64_t in_features,
                                             const IntQuantizeOptions& options) {
  IntQuantizeOptions eight = options;
  eight.bits = 8;
  return naive_int8_tensors(quantize_ints(weight, out_features, in_features, eight), eight);
}

std::vector<NamedTensor> naive_int8_tensors(const IntQuantized& q,
                                            const IntQuantizeOptions& options) {
  const std::int64_t out_features = q.out_features;
  const std::int64_t in_features = q.in_features;
  const std::vector<std::int64_t> scale_shape = {out_features, q.groups};
  std::vector<NamedTensor> tensors = {
      {"weight", DType::I8, {out_features, in_features}, int8_bytes(q.values)},
      {"weight_scale", options.scale_dtype, scale_shape,
       scale_bytes(q.scales, options.scale_dtype)}};
  if (!options.symmetric) {
    tensors.push_back({"weight_zero_point", DType::I8, scale_shape, int8_bytes(q.zeros)});
  }
  if (!q.g_idx.empty()) {
    tensors.push_back({"weight_g_idx", DType::I32, {in_features}, detail::to_bytes(q.g_idx)});
  }
  return tensors;
}

}  // namespace quire::engine::formats
