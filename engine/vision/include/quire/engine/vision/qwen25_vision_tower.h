#pragma once

// Qwen2.5-VL's vision tower and patch merger on the CPU, as transformers'
// Qwen2_5_VisionTransformerPretrainedModel runs them:
//
// 1. The patch embedding (a Conv3d whose kernel is its stride) as a linear
//    over each flattened patch, patches in the processor's order (2 x 2
//    merge blocks one after another).
// 2. Each patch's 2D rotary angles from its (row, column) on the patch grid:
//    the first half of a head's rotary frequencies turn with the row, the
//    second half with the column.
// 3. The patches regrouped window by window (window_size pixels on a side,
//    whole merge blocks; windows at the right and bottom edges hold what is
//    left), the blocks in fullatt_block_indexes attending over each whole
//    frame, the others only inside their window.
// 4. Pre-norm blocks: RMSNorm, attention with the rotary angles applied to
//    q and k, RMSNorm, a gated MLP (down(act(gate(x)) * up(x))).
// 5. The merger: RMSNorm, each merge block's patches concatenated into one
//    row, fc -> exact GELU -> fc to the language model's width, and the
//    tokens put back in the processor's order.
//
// Products run through kernels::linear (FP32 sums, spread over the pool);
// RMSNorm and softmax sums are taken in double.

#include <span>
#include <vector>

#include "quire/engine/vision/qwen25_vision_config.h"
#include "quire/engine/vision/qwen25_vision_weights.h"
#include "quire/kernels/cpu/thread_pool.h"

namespace quire::engine::vision {

// The processor's grid_thw: frames, and patches down and across.
struct PatchGrid {
  int t = 0;
  int h = 0;
  int w = 0;
};

// Throws std::invalid_argument naming the problem when `grid` is not whole
// merge blocks, or `patches` does not hold t * h * w rows of
// config.patch_values() values.
void check_patch_input(const Qwen25VisionConfig& config, std::span<const float> patches,
                       PatchGrid grid);

// [t * h * w / merge^2, out_hidden_size] row-major: one row per image token,
// in the order the prompt's image tokens take them.
std::vector<float> run_qwen25_vision(kernels::ThreadPool& pool, const Qwen25VisionConfig& config,
                                     const Qwen25VisionWeights& weights,
                                     std::span<const float> patches, PatchGrid grid);

}  // namespace quire::engine::vision
