#pragma once

// Gemma 3's multimodal projector, as transformers' Gemma3MultiModalProjector
// runs it: the tower's patches laid back on their grid and average-pooled in
// squares of pool_kernel() patches to mm_tokens_per_image tokens (in reading
// order), Gemma's RMSNorm (x / rms(x) * (1 + w), eps = vision_config's
// layer_norm_eps), then the projection to the language model's width.

#include <span>
#include <vector>

#include "quire/engine/vision/gemma3_vision_config.h"
#include "quire/engine/vision/vision_weights.h"
#include "quire/kernels/cpu/thread_pool.h"

namespace quire::engine::vision {

// `tower_output` is run_siglip_tower()'s [patches, hidden_size]. Returns
// [tokens_per_image, text_hidden_size] row-major.
std::vector<float> run_gemma3_projector(kernels::ThreadPool& pool, const Gemma3VisionConfig& config,
                                        const Gemma3ProjectorWeights& weights,
                                        std::span<const float> tower_output);

}  // namespace quire::engine::vision
