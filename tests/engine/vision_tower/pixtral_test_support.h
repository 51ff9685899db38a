#pragma once

// Random Mistral 3 multimodal directories (Mistral Small 3.x in small) with
// Pixtral towers, deterministic pixel tensors of any height and width, and
// tests/tools/reference_vision.py's float64 embeddings of them.

#include <filesystem>
#include <vector>

#include "quire/engine/modelgen/random_model_spec.h"

namespace quire::test {

// mistral with a vision tower: 4 heads of 16, 2 layers, images up to 112 x
// 112 in patches of 14 (an 8 x 8 grid at most), squares of 2 x 2 patches
// merged into tokens of a 128-wide text model.
engine::modelgen::RandomModelSpec pixtral_spec(const char* format, const char* text_prefix,
                                               std::uint64_t seed);

// channels x height x width values of order one, the same for the same arguments.
std::vector<float> pixtral_pixels(int channels, int height, int width, std::uint32_t seed);

// Runs reference_vision.py on a height x width image; an empty result after
// a failure it reports with QWARN.
std::vector<double> pixtral_reference(const std::filesystem::path& model,
                                      const std::vector<float>& pixels, int height, int width);

}  // namespace quire::test
