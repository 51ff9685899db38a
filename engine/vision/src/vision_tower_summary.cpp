#include "quire/engine/vision/vision_tower_summary.h"

#include "quire/engine/model_error.h"
#include "quire/engine/vision/gemma3_image_scratch.h"
#include "quire/engine/vision/gemma3_vision_config.h"
#include "quire/engine/vision/vision_weights.h"

namespace quire::engine::vision {

VisionAvailability describe_vision(const std::filesystem::path& directory,
                                   const io::ModelTensors& tensors) {
  VisionAvailability availability;
  try {
    const std::optional<Gemma3VisionConfig> config = read_gemma3_vision_config(directory);
    if (!config) return availability;
    const VisionTensorSummary found = check_gemma3_vision_tensors(tensors, *config);
    VisionTowerSummary& summary = availability.tower.emplace();
    summary.tower = "SigLIP";
    summary.projector = "Gemma 3";
    summary.image_size = config->tower.image_size;
    summary.patch_size = config->tower.patch_size;
    summary.layers = config->tower.num_layers;
    summary.hidden_size = config->tower.hidden_size;
    summary.tokens_per_image = config->tokens_per_image;
    summary.dtype = found.dtype;
    summary.parameters = found.parameters;
    summary.bytes = found.bytes;
    summary.memory_bytes = found.memory_bytes;
    summary.scratch_bytes = gemma3_image_scratch_bytes(*config);
    summary.tensor_prefix = found.prefixes.tower;
  } catch (const ModelError& error) {
    availability.problem = error.what();
  }
  return availability;
}

}  // namespace quire::engine::vision
