#pragma once

// Private: the steps the vision encoders share: products through
// kernels::linear, and the row-wise steps, each spread over the pool.

#include <cstdint>
#include <span>
#include <vector>

#include "quire/engine/vision/gemma3_vision_config.h"
#include "quire/engine/vision/vision_weights.h"
#include "quire/kernels/cpu/thread_pool.h"

namespace quire::engine::vision::detail {

// out = x W^T + b for `rows` rows of x; `out` is resized to fit.
void apply_linear(kernels::ThreadPool& pool, const DenseLinear& linear, const std::vector<float>& x,
                  std::int64_t rows, std::vector<float>& out);

// A product with an activation as the "weight": out[rows, n] = x[rows, k] m^T
// for m [n, k] row-major FP32.
void multiply_by_transposed(kernels::ThreadPool& pool, const float* x, std::int64_t rows,
                            const float* m, std::int64_t n, std::int64_t k, float* out);

// out[r] = x[r] / sqrt(mean(x[r]^2) + eps) * weight, the mean in double
// (Qwen2RMSNorm, which takes it in FP32).
void rms_norm_rows(kernels::ThreadPool& pool, const float* x, std::int64_t rows, std::int64_t width,
                   const std::vector<float>& weight, double eps, float* out);

// gate = silu(gate) * up, element by element.
void silu_gate_in_place(kernels::ThreadPool& pool, std::span<float> gate,
                        std::span<const float> up);

// x *= y, element by element.
void multiply_in_place(kernels::ThreadPool& pool, std::span<float> x, std::span<const float> y);

// out[r] = (x[r] - mean) / sqrt(var + eps) * weight + bias, over rows of
// `width`, with the mean and (biased) variance taken in double.
void layer_norm_rows(kernels::ThreadPool& pool, const float* x, std::int64_t rows,
                     std::int64_t width, const LayerNormWeights& norm, double eps, float* out);

// x = gelu(x), element by element.
void gelu_in_place(kernels::ThreadPool& pool, std::span<float> x, Gelu kind);

// Each row of `scores` times `scale`, then its softmax.
void scaled_softmax_rows(kernels::ThreadPool& pool, float* scores, std::int64_t rows,
                         std::int64_t width, float scale);

// x += y.
void add_in_place(kernels::ThreadPool& pool, std::span<float> x, std::span<const float> y);

}  // namespace quire::engine::vision::detail
