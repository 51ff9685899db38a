#pragma once

// Private: the JSON files of a generated model directory, as text.

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "quire/engine/io/safetensors_writer.h"
#include "quire/engine/modelgen/random_model_spec.h"

namespace quire::engine::modelgen::detail {

inline constexpr int kBosId = 1;
inline constexpr int kEosId = 2;

// The BOS and EOS ids config.json names: the spec's, or those of a copied tokenizer.
struct SpecialIds {
  // None for a tokenizer without a BOS token (Qwen's): written as null.
  std::optional<int> bos = kBosId;
  std::vector<int> eos{kEosId};
};
SpecialIds special_ids(const RandomModelSpec& spec);

std::string config_json(const RandomModelSpec& spec);
std::string config_json(const RandomModelSpec& spec, const SpecialIds& ids);
std::string generation_config_json(const SpecialIds& ids);
std::string tokenizer_config_json(const RandomModelSpec& spec);
// qwen2_5_vl's preprocessor_config.json, as Qwen/Qwen2.5-VL-7B-Instruct's
// with the spec's patch, merge and temporal sizes.
std::string preprocessor_config_json(const RandomModelSpec& spec);
// Qwen2.5-VL's chat format for a directory with a real Qwen tokenizer
// (tokenizer_from): ChatML, a default system message, and
// "<|vision_start|><|image_pad|><|vision_end|>" for each image part, which
// Qwen2_5_VLProcessor expands; written as chat_template.jinja.
std::string qwen2_5_vl_chat_template();
// An EXL3 model's quantization_config.json, as exllamav3's converter writes
// it beside config.json: config.json's quantization_config plus
// "tensor_storage", each module's stored tensors (shape, bytes, torch dtype)
// and, for quantized ones, the format, bits and codebook multiplier.
std::string exl3_quantization_config_json(const RandomModelSpec& spec,
                                          std::span<const io::SafetensorsWriter::Listing> tensors);

}  // namespace quire::engine::modelgen::detail
