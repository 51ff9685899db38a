#pragma once

// Private: Mistral Small 3.x's multimodal download
// (Mistral3ForConditionalGeneration) in small: its config.json, the
// processor's two files, and the Pixtral tower's and Mistral 3 projector's
// tensors beside the language model.

#include <string>
#include <utility>
#include <vector>

#include "config_parts.h"
#include "tensor_builder.h"

namespace quire::engine::modelgen::detail {

// spec.architecture == "mistral" with spec.multimodal.
bool is_mistral3(const RandomModelSpec& spec);

// config.json as mistralai/Mistral-Small-3.1-24B-Instruct-2503 writes it:
// the language model's keys in text_config (model_type "mistral"), a Pixtral
// vision_config, and the projector's keys at the top.
Json mistral3_config(const RandomModelSpec& spec, const SpecialIds& ids);

// preprocessor_config.json and processor_config.json, as published, with
// the patch size of the small tower.
std::vector<std::pair<std::string, std::string>> mistral3_processor_files(
    const RandomModelSpec& spec);

// The tower under `tower` ("vision_tower." or "model.vision_tower.") and the
// projector under `projector`, never quantized.
void plan_mistral3_vision(TensorBuilder& builder, const std::string& tower,
                          const std::string& projector);

// Checks the VisionSpec of a Mistral 3 spec; throws std::invalid_argument
// naming the option.
void validate_mistral3_vision(const RandomModelSpec& spec);

}  // namespace quire::engine::modelgen::detail
