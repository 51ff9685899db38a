#pragma once

// Host memory that Qwen2.5-VL's tower holds while it reads one image on the
// CPU, priced from config.json and the processor's pixel budget so that the
// planner can say, before anything is loaded, whether the machine can hold
// the largest image the processor makes. It mirrors what
// qwen25_vision_tower.cpp allocates: a change to its buffers must change
// this too (test_planner_vision measures it).

#include <cstdint>

#include "quire/engine/vision/qwen25_vision_config.h"

namespace quire::engine::vision {

// Query rows of one attention block at a time: a full-attention layer spans
// the whole image, whose scores would otherwise grow with its square.
inline constexpr std::int64_t kQwenQueryBlock = 256;

// Patches of the largest image within `max_pixels` (preprocessor_config.json):
// smart_resize keeps height x width within it in whole merge blocks, each
// patch_size^2 pixels; one frame (an image's temporal patches repeat it).
std::int64_t qwen25_largest_image_patches(const Qwen25VisionConfig& config,
                                          std::int64_t max_pixels);

// The most bytes live at once while run_qwen25_vision reads an image of
// `patches` patches in one frame, its input and output included, as FP32
// values (4 bytes each). Every buffer lives to the end, when the merger's
// output is written; with R patches, V values a patch, H the tower's width,
// I its MLP width, D = H / heads, U = merge^2, T = R / U tokens, O the
// output width and B = min(R, kQwenQueryBlock), in floats:
//   R*V (the input) + R*V (regrouped by window) + 2*R (the source rows, 64
//   bits) + 2*R*D (rotary cos and sin) + 7*R*H (x, h, qkv, attended,
//   projected) + 2*R*I (gate, up) + 4*R*D + B*R (one head's q, k, v, output
//   and one block's scores, for the full-attention span of R rows)
//   + 2*T (the window order, 64 bits) + T*U*H (the merger's inner
//   activations) + 2*T*O (its output, and the output put back in order)
// The products' per-thread tiles and the window plan's spans are not
// counted.
std::int64_t qwen25_image_scratch_bytes(const Qwen25VisionConfig& config, std::int64_t patches);

}  // namespace quire::engine::vision
