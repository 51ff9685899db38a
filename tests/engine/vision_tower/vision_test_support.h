#pragma once

// Random Gemma 3 and Qwen2.5-VL multimodal directories with small vision
// towers, deterministic pixel and patch tensors, and
// tests/tools/reference_vision.py's float64 embeddings of them.

#include <QString>
#include <array>
#include <filesystem>
#include <vector>

#include "quire/engine/modelgen/random_model_spec.h"

namespace quire::test {

// gemma3 with a vision tower: 4 heads of 16, 2 layers, 56 x 56 images in
// patches of 14 (a 4 x 4 grid) pooled to 4 tokens of a 128-wide text model.
engine::modelgen::RandomModelSpec vision_spec(const char* format, const char* text_prefix,
                                              std::uint64_t seed);

std::filesystem::path write_vision_model(const engine::modelgen::RandomModelSpec& spec,
                                         const QString& dir);

// channels x size x size values of order one, the same for the same arguments.
std::vector<float> test_pixels(int channels, int size, std::uint32_t seed);

// Runs reference_vision.py; an empty result after a failure it reports with QWARN.
std::vector<double> reference_embeddings(const std::filesystem::path& model,
                                         const std::vector<float>& pixels);

// qwen2_5_vl with a vision tower: 4 heads of 16, 2 blocks (block 1 attends
// fully), patches of 14 merged 2 x 2, windows of 112 pixels (4 x 4 tokens),
// text hidden 128. `text_prefix` "model." (as published) or
// "model.language_model.".
engine::modelgen::RandomModelSpec qwen_vision_spec(const char* format, const char* text_prefix,
                                                   std::uint64_t seed);

// `rows` patches of `values` each, of order one, the same for the same arguments.
std::vector<float> test_patches(std::int64_t rows, std::int64_t values, std::uint32_t seed);

// Runs reference_vision.py on Qwen2.5-VL patches and their grid_thw; empty
// after a failure it reports with QWARN.
std::vector<double> reference_qwen_embeddings(const std::filesystem::path& model,
                                              const std::vector<float>& patches,
                                              std::array<int, 3> grid_thw);

// Sets `key` of config.json's object `object` ("" for the top level) to
// `value` (JSON text).
void set_config(const std::filesystem::path& model, const char* object, const char* key,
                const char* value);

}  // namespace quire::test
