#include "pixtral_vision_summary.h"

#include "quire/engine/vision/pixtral_image_scratch.h"
#include "quire/engine/vision/pixtral_vision_config.h"
#include "quire/engine/vision/pixtral_vision_weights.h"

namespace quire::engine::vision::detail {

bool describe_mistral3_vision(const std::filesystem::path& directory,
                              const io::ModelTensors& tensors, VisionAvailability& availability) {
  const std::optional<Mistral3VisionConfig> config = read_mistral3_vision_config(directory);
  if (!config) return false;
  const VisionTensorSummary found = check_mistral3_vision_tensors(tensors, *config);
  VisionTowerSummary& summary = availability.tower.emplace();
  summary.tower = "Pixtral";
  summary.projector = "Mistral 3";
  summary.image_size = config->tower.image_size;
  summary.variable_size = true;
  summary.patch_size = config->tower.patch_size;
  summary.layers = config->tower.num_layers;
  summary.hidden_size = config->tower.hidden_size;
  // The most an image takes: image_size on both sides.
  summary.tokens_per_image = config->tokens_for(config->tower.image_size, config->tower.image_size);
  summary.dtype = found.dtype;
  summary.parameters = found.parameters;
  summary.bytes = found.bytes;
  summary.memory_bytes = found.memory_bytes;
  summary.scratch_bytes =
      pixtral_image_scratch_bytes(*config, pixtral_largest_image_patches(*config));
  summary.tensor_prefix = found.prefixes.tower;
  return true;
}

}  // namespace quire::engine::vision::detail
