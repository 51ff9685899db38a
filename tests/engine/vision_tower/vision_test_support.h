#pragma once

// Random Gemma 3 multimodal directories with small vision towers, a
// deterministic pixel tensor, and tests/tools/reference_vision.py's float64
// embeddings of it.

#include <QString>
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

// Sets `key` of config.json's object `object` ("" for the top level) to
// `value` (JSON text).
void set_config(const std::filesystem::path& model, const char* object, const char* key,
                const char* value);

}  // namespace quire::test
