#pragma once

// The image processor's files of a model with a vision tower, as the
// published directories hold them.

#include <filesystem>

#include "quire/engine/modelgen/random_model_spec.h"

namespace quire::engine::modelgen::detail {

// preprocessor_config.json and processor_config.json for a multimodal
// Gemma 3 (gemma-3-4b-it's, at the spec's image size and tokens per image)
// or Mistral 3 (mistral3_files.h); nothing for a model without a vision
// tower.
void write_processor_files(const RandomModelSpec& spec, const std::filesystem::path& dir);

}  // namespace quire::engine::modelgen::detail
