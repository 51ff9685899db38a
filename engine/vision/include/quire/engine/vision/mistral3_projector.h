#pragma once

// Mistral 3's multimodal projector, as transformers'
// Mistral3MultiModalProjector runs it for one image: RMSNorm (norm, eps =
// text_config.rms_norm_eps) of every patch; the patch merger, which lays the
// patches back on their grid and takes each spatial_merge_size square as one
// row of hidden x merge^2 values in torch's unfold order (channel, then row
// and column inside the square), squares in reading order, through
// merging_layer; then linear_1, GELU, linear_2.

#include <span>
#include <vector>

#include "quire/engine/vision/pixtral_vision_config.h"
#include "quire/engine/vision/pixtral_vision_weights.h"
#include "quire/kernels/cpu/thread_pool.h"

namespace quire::engine::vision {

// `tower_output` is run_pixtral_tower()'s [grid_height x grid_width, hidden]
// for a patch grid whose sides are multiples of spatial_merge_size. Returns
// [tokens, text_hidden_size] row-major, the tokens row by row over the merged
// grid, as the prompt's [IMG] positions take them.
std::vector<float> run_mistral3_projector(kernels::ThreadPool& pool,
                                          const Mistral3VisionConfig& config,
                                          const Mistral3ProjectorWeights& weights,
                                          std::span<const float> tower_output, int grid_height,
                                          int grid_width);

}  // namespace quire::engine::vision
