#pragma once

// Private: describe_vision()'s part for Mistral3ForConditionalGeneration.

#include <filesystem>

#include "quire/engine/io/model_tensors.h"
#include "quire/engine/vision/vision_tower_summary.h"

namespace quire::engine::vision::detail {

// False when config.json describes no Mistral 3 vision side; otherwise fills
// `availability.tower`. Throws ModelError as the checks do.
bool describe_mistral3_vision(const std::filesystem::path& directory,
                              const io::ModelTensors& tensors, VisionAvailability& availability);

}  // namespace quire::engine::vision::detail
