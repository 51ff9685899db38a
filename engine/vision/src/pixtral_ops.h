#pragma once

// Private: the row-wise steps of the Pixtral encoder and the Mistral 3
// projector that are not matrix products, each spread over the pool by rows.

#include <cstdint>
#include <span>
#include <vector>

#include "quire/engine/vision/pixtral_vision_config.h"
#include "quire/kernels/cpu/thread_pool.h"

namespace quire::engine::vision::detail {

// out[r] = x[r] / sqrt(mean(x[r]^2) + eps) * weight over rows of `width`,
// the mean of squares taken in double (transformers takes it in float32).
void rms_norm_rows(kernels::ThreadPool& pool, const float* x, std::int64_t rows, std::int64_t width,
                   std::span<const float> weight, double eps, float* out);

// gate = act(gate) * up, element by element.
void gated_activation_in_place(kernels::ThreadPool& pool, std::span<float> gate,
                               std::span<const float> up, GateActivation kind);

// Pixtral's 2D rotary embedding for one image's patch grid, as
// PixtralRotaryEmbedding builds it: theta^(-2k / head_dim) for k below
// head_dim / 2; the even k turn with the patch's row, the odd k with its
// column; the first half of a head's angles are the row's, the second the
// column's, and the list is repeated for rotate_half's two halves.
class PixtralRotary {
 public:
  PixtralRotary(const PixtralConfig& config, int grid_height, int grid_width);

  // Rotates every head of `x` [rows, heads x head_dim], rows being the
  // patches in reading order, as apply_rotary_pos_emb with rotate_half does.
  void apply(kernels::ThreadPool& pool, std::vector<float>& x) const;

 private:
  int head_dim_;
  std::int64_t rows_;
  std::vector<float> cos_, sin_;  // [rows, head_dim]
};

}  // namespace quire::engine::vision::detail
