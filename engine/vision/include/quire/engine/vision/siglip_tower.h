#pragma once

// SigLIP's vision encoder on the CPU, as transformers' SiglipVisionTransformer
// runs it without its pooling head: patch embedding (a stride-patch
// convolution) plus learned position embeddings, pre-LayerNorm encoder
// layers (full bidirectional attention scaled by head_dim^-1/2, then an MLP
// fc1 -> GELU -> fc2), and the final post_layernorm.
//
// Products run through kernels::linear (FP32 sums, spread over the pool);
// LayerNorm statistics and softmax sums are taken in double. Every step is a
// function over whole [rows, width] activations, so that a device backend
// can take the same steps in the same order.

#include <cstdint>
#include <span>
#include <vector>

#include "quire/engine/vision/gemma3_vision_config.h"
#include "quire/engine/vision/vision_weights.h"
#include "quire/kernels/cpu/thread_pool.h"

namespace quire::engine::vision {

// An image after preprocessing: channels x height x width floats, channel
// planes one after another, rows top to bottom (what the processor's
// pixel_values hold for one image).
struct PixelTensor {
  std::span<const float> values;
  int channels = 0;
  int height = 0;
  int width = 0;
};

// Throws std::invalid_argument naming both shapes when `pixels` is not
// num_channels x image_size x image_size, or holds another number of values.
void check_pixels(const SiglipConfig& config, const PixelTensor& pixels);

// The encoder's last hidden state, [patches, hidden_size] row-major with the
// patches in reading order (row by row).
std::vector<float> run_siglip_tower(kernels::ThreadPool& pool, const SiglipConfig& config,
                                    const SiglipWeights& weights, const PixelTensor& pixels);

}  // namespace quire::engine::vision
