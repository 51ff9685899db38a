#include "quire/engine/vision/vision_tower_summary.h"

#include "pixtral_vision_summary.h"
#include "quire/engine/model_error.h"
#include "quire/engine/vision/gemma3_image_scratch.h"
#include "quire/engine/vision/gemma3_vision_config.h"
#include "quire/engine/vision/processor_config.h"
#include "quire/engine/vision/qwen25_image_scratch.h"
#include "quire/engine/vision/qwen25_vision_config.h"
#include "quire/engine/vision/qwen25_vision_weights.h"
#include "quire/engine/vision/vision_weights.h"

namespace quire::engine::vision {
namespace {

void take_tensors(const VisionTensorSummary& found, VisionTowerSummary& summary) {
  summary.dtype = found.dtype;
  summary.parameters = found.parameters;
  summary.bytes = found.bytes;
  summary.memory_bytes = found.memory_bytes;
  summary.tensor_prefix = found.prefixes.tower;
}

std::optional<VisionTowerSummary> describe_gemma3(const std::filesystem::path& directory,
                                                  const io::ModelTensors& tensors) {
  const std::optional<Gemma3VisionConfig> config = read_gemma3_vision_config(directory);
  if (!config) return std::nullopt;
  VisionTowerSummary summary;
  take_tensors(check_gemma3_vision_tensors(tensors, *config), summary);
  summary.tower = "SigLIP";
  summary.projector = "Gemma 3";
  summary.image_size = config->tower.image_size;
  summary.patch_size = config->tower.patch_size;
  summary.layers = config->tower.num_layers;
  summary.hidden_size = config->tower.hidden_size;
  summary.tokens_per_image = config->tokens_per_image;
  summary.scratch_bytes = gemma3_image_scratch_bytes(*config);
  return summary;
}

// Images keep their aspect ratio and take as many tokens as their resized
// size holds merge blocks: no fixed image size or token count.
std::optional<VisionTowerSummary> describe_qwen25(const std::filesystem::path& directory,
                                                  const io::ModelTensors& tensors) {
  const std::optional<Qwen25VisionConfig> config = read_qwen25_vision_config(directory);
  if (!config) return std::nullopt;
  VisionTowerSummary summary;
  take_tensors(check_qwen25_vision_tensors(tensors, *config), summary);
  summary.tower = "Qwen2.5-VL ViT";
  summary.projector = "patch merger";
  summary.patch_size = config->patch_size;
  summary.merge_size = config->spatial_merge_size;
  summary.layers = config->depth;
  summary.hidden_size = config->hidden_size;
  // Priced for the largest image the processor makes: its pixel budget is
  // preprocessor_config.json's (transformers' default where the file is
  // absent; one that does not parse leaves the model without images).
  quire::vision::Qwen2VLOptions budget;
  if (std::filesystem::exists(directory / "preprocessor_config.json")) {
    const quire::vision::ProcessorConfig processor =
        quire::vision::read_processor_config(directory);
    if (const auto* options = std::get_if<quire::vision::Qwen2VLOptions>(&processor.family))
      budget = *options;
  }
  summary.scratch_bytes =
      qwen25_image_scratch_bytes(*config, qwen25_largest_image_patches(*config, budget.max_pixels));
  return summary;
}

}  // namespace

VisionAvailability describe_vision(const std::filesystem::path& directory,
                                   const io::ModelTensors& tensors) {
  VisionAvailability availability;
  try {
    availability.tower = describe_gemma3(directory, tensors);
    if (!availability.tower) availability.tower = describe_qwen25(directory, tensors);
    if (!availability.tower) detail::describe_mistral3_vision(directory, tensors, availability);
  } catch (const ModelError& error) {
    availability.problem = error.what();
  }
  return availability;
}

}  // namespace quire::engine::vision
