#pragma once

// Host memory that Mistral Small 3's vision side (the Pixtral encoder and
// the Mistral 3 projector) holds while it reads one image on the CPU,
// priced from config.json so that the planner can say, before anything is
// loaded, whether the machine can hold the largest image. It mirrors what
// pixtral_tower.cpp and mistral3_projector.cpp allocate: a change to their
// buffers must change this too (test_planner_vision measures it).

#include <cstdint>

#include "quire/engine/vision/pixtral_vision_config.h"

namespace quire::engine::vision {

// Patches of the largest image: image_size on both sides, in whole tokens
// (token_pixels() on a side), as the processor rounds them.
std::int64_t pixtral_largest_image_patches(const Mistral3VisionConfig& config);

// The most bytes live at once while PixtralVisionEncoder::embed reads an
// image of `patches` patches, its pixel tensor and its output included, as
// FP32 values (4 bytes each). With R patches, V values a patch (its pixels),
// H the encoder's width, I its MLP width, D = H / heads, T = R / merge^2
// tokens and E the text model's width, in floats the largest of:
//   patch embedding:  R*V (pixels) + R*V (patches gathered) + R*H
//   a layer:  R*V + 2*R*H (the embedded patches, x) + 2*R*D (rotary cos and
//     sin) + 4*R*D + R*R (one head's q, k, v, output and scores) + 6*R*H
//     (h, q, k, v, attended, projected) + 2*R*I (gate, up)
//   projector:  R*V + 3*R*H (the encoder's output, normed, unfolded) + T*H
//     (merged) + 2*T*E (linear_1's and linear_2's outputs)
// The products' per-thread tiles are not counted.
std::int64_t pixtral_image_scratch_bytes(const Mistral3VisionConfig& config, std::int64_t patches);

}  // namespace quire::engine::vision
