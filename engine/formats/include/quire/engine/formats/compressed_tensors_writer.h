#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "quire/engine/formats/layer_tensors.h"
#include "quire/kernels/dtype.h"

namespace quire::engine::formats {

// Writing compressed-tensors' integer formats for Quire's own test models,
// quantized as compressed-tensors' min-max observer and quantize() do
// (quantization/utils/helpers.py calculate_qparams, lifecycle/forward.py),
// round to nearest without GPTQ's Hessian: for b bits the values run from
// -2^(b-1) to 2^(b-1) - 1 over [min(w, 0), max(w, 0)] of each group and
// output row; symmetric: scale = max|w| / ((2^b - 1) / 2), no zero point;
// asymmetric: scale = (max - min) / (2^b - 1), zero point
// round(-2^(b-1) - min / scale) within the range. Scales are stored in the
// model's dtype (BF16 here) and the values computed with the scale as stored.
struct IntQuantizeOptions {
  int bits = 4;  // pack-quantized: 4 or 8; naive int8: 8
  bool symmetric = true;
  int group_size = 128;  // 0: one scale per output row (strategy "channel")
  // Group actorder: inputs are assigned to groups in an order shuffled by
  // this seed, each group holding group_size of them (weight_g_idx).
  std::optional<std::uint64_t> actorder_seed;
  kernels::DType scale_dtype = kernels::DType::BF16;
};

// A layer's weights as signed integers in groups of inputs: the weight
// W[n, k] is (values[n, k] - zeros[n, g]) * scales[n, g] with g the group of
// input k (g_idx[k], or k / group_size without actorder).
struct IntQuantized {
  std::int64_t out_features = 0;    // N
  std::int64_t in_features = 0;     // K
  std::int64_t groups = 0;          // G
  std::vector<std::int8_t> values;  // [N, K], -2^(b-1) to 2^(b-1) - 1
  std::vector<float> scales;        // [N, G], as stored
  std::vector<std::int8_t> zeros;   // [N, G]; all 0 when symmetric
  std::vector<std::int32_t> g_idx;  // [K]; empty without actorder
};

// Rounds each weight to the nearest integer of its group's min-max scale
// (the scheme described above). Throws std::invalid_argument for shapes or
// widths the formats cannot hold.
IntQuantized quantize_ints(std::span<const float> weight, std::int64_t out_features,
                           std::int64_t in_features, const IntQuantizeOptions& options);

// pack-quantized and naive-quantized tensors (described below) of integers
// already chosen, by quantize_ints or by GPTQ (gptq_quantizer.h); `options`
// gives the width, the symmetry and the scales' dtype.
std::vector<NamedTensor> pack_quantized_tensors(const IntQuantized& q,
                                                const IntQuantizeOptions& options);
std::vector<NamedTensor> naive_int8_tensors(const IntQuantized& q,
                                            const IntQuantizeOptions& options);

// pack-quantized: "weight_packed" I32 [N, K / P], "weight_scale" [N, G],
// "weight_shape" I64 [2], "weight_zero_point" I32 [N / P, G] when
// asymmetric, "weight_g_idx" I32 [K] with actorder, for W [N, K] (K and N
// multiples of 8, group_size dividing K). Throws std::invalid_argument.
std::vector<NamedTensor> quantize_pack_quantized(std::span<const float> weight,
                                                 std::int64_t out_features,
                                                 std::int64_t in_features,
                                                 const IntQuantizeOptions& options);

// naive-quantized int8: "weight" I8 [N, K], "weight_scale" [N, 1] (or
// [N, G] in groups), "weight_zero_point" I8 of the scale's shape when
// asymmetric, "weight_g_idx" with actorder.
std::vector<NamedTensor> quantize_naive_int8(std::span<const float> weight,
                                             std::int64_t out_features, std::int64_t in_features,
                                             const IntQuantizeOptions& options);

}  // namespace quire::engine::formats
