#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "quire/engine/formats/layer_tensors.h"

namespace quire::engine::formats {

// Writing AutoAWQ GEMM layers for Quire's own test models, quantized as
// AutoAWQ's pseudo_quantize_tensor does without its search for activation
// scales: per group of `group_size` inputs and output row, 15 steps of
// (max - min) / 15 (at least 1e-5) with zero point round(-min / step) in
// 0..15, the step stored in FP16 and each value round((w + z s) / s16)
// clamped to 0..15 (WQLinear_GEMM.from_linear).
struct AwqQuantizeOptions {
  int group_size = 128;  // dividing K; -1: one group
};

// "qweight" I32 [K, N / 8], "qzeros" I32 [G, N / 8] (both in AWQ's
// interleaved order) and "scales" F16 [G, N] for W [N, K] (K and N multiples
// of 8). Throws std::invalid_argument for bad arguments.
std::vector<NamedTensor> quantize_awq(std::span<const float> weight, std::int64_t out_features,
                                      std::int64_t in_features, const AwqQuantizeOptions& options);

}  // namespace quire::engine::formats
