#pragma once

// Host memory that Gemma 3's encoder holds while it reads one image on the
// CPU, priced from config.json alone so that the planner can say, before
// anything is loaded, whether the machine can hold it. It mirrors what
// siglip_tower.cpp and gemma3_projector.cpp allocate: a change to their
// buffers must change this too (test_planner's vision tests hold the figure).

#include <cstdint>

#include "quire/engine/vision/gemma3_vision_config.h"

namespace quire::engine::vision {

// The most bytes live at once while Gemma3VisionEncoder::embed reads one
// image, its input pixel tensor and its output embeddings included, as FP32
// values (4 bytes each). With P patches, H the tower's width, I its MLP
// width, D = H / heads, X = channels x image_size^2 the pixel values, T the
// tokens per image and E the text model's width, the largest of:
//   patch embedding:  X (pixels) + X (patches gathered) + P*H
//   the last LayerNorm of the tower, where every buffer of
//   run_siglip_tower is held: X + 8*P*H (x, h, q, k, v, attended,
//   projected, out) + P*I (the MLP's inner activations)
//   + 4*P*D + P*P (one head's q, k, v, output and scores, reused by every
//   head)
//   projector: X + P*H (the tower's output) + T*H (pooled) + max(2*H (the
//   pooling's double sums), T*E (the embeddings))
// The products' per-thread tiles (a few KiB per thread) are not counted.
std::int64_t gemma3_image_scratch_bytes(const Gemma3VisionConfig& config);

}  // namespace quire::engine::vision
