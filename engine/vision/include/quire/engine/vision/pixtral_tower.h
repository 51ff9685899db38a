#pragma once

// Pixtral's vision encoder on the CPU, as transformers' PixtralVisionModel
// runs it for one image: the stride-patch convolution (no bias) over the
// image's own patch grid, ln_pre (RMSNorm), then pre-norm layers with
// RMSNorms (eps 1e-5), full attention among the image's patches with 2D
// rotary positions (row and column of each patch), and a gated MLP
// down(act(gate(x)) * up(x)). There is no final norm.
//
// Products run through kernels::linear (FP32 sums, spread over the pool);
// RMSNorm statistics and softmax sums are taken in double.

#include <vector>

#include "quire/engine/vision/pixtral_vision_config.h"
#include "quire/engine/vision/pixtral_vision_weights.h"
#include "quire/engine/vision/siglip_tower.h"
#include "quire/kernels/cpu/thread_pool.h"

namespace quire::engine::vision {

// Throws std::invalid_argument naming the problem when `pixels` does not
// have num_channels planes, its height or width is not a positive multiple
// of patch_size x spatial_merge_size (the processor's rounding) or exceeds
// image_size, or it holds another number of values.
void check_pixtral_pixels(const Mistral3VisionConfig& config, const PixelTensor& pixels);

// The output of the first `weights.layers.size()` encoder layers,
// [patches, hidden_size] row-major with the patches in reading order over
// the image's (height / patch) x (width / patch) grid.
std::vector<float> run_pixtral_tower(kernels::ThreadPool& pool, const Mistral3VisionConfig& config,
                                     const PixtralWeights& weights, const PixelTensor& pixels);

}  // namespace quire::engine::vision
