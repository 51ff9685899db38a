#pragma once

// Private: the row-wise steps of the vision encoder that are not matrix
// products, each spread over the pool by rows.

#include <cstdint>
#include <span>

#include "quire/engine/vision/gemma3_vision_config.h"
#include "quire/engine/vision/vision_weights.h"
#include "quire/kernels/cpu/thread_pool.h"

namespace quire::engine::vision::detail {

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
