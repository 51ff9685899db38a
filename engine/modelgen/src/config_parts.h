#pragma once

// Private: pieces of config.json shared by the writers of every family
// (config_files.cpp, family_configs.cpp, published_config.cpp).

#include <nlohmann/json.hpp>
#include <span>
#include <vector>

#include "config_files.h"
#include "quire/engine/modelgen/exl3_config.h"
#include "quire/engine/modelgen/random_model_spec.h"

namespace quire::engine::modelgen::detail {

// Keys in the order written, as in the files Hugging Face tools save.
using Json = nlohmann::ordered_json;

// "rope_scaling" of the Llama-style families: both spellings of the type
// ("type" for older readers, "rope_type" for newer); null for none.
Json rope_scaling_json(const RandomModelSpec& spec);

// "quantization_config" for EXL2 and GPTQ; null for dense weights.
Json quantization_json(const RandomModelSpec& spec);

// EXL3's quantization_config, and quantization_config.json's
// "tensor_storage" (exl3_config.h).
Json exl3_quantization_json(const Exl3ConfigSettings& settings);
Json exl3_tensor_storage(std::span<const io::SafetensorsWriter::Listing> tensors);

// One id as a number, several as a list, as the published files write them.
Json ids_json(const std::vector<int>& ids);
Json bos_json(const SpecialIds& ids);

// The spec's torch_dtype, or the weights' (float16 or bfloat16).
std::string torch_dtype_of(const RandomModelSpec& spec);

// Phi-3's longrope factors, rotary_dim / 2 of each, drawn from the seed:
// short ones near 1 (1.0 to 1.5), long ones stretching up to 40, both rising
// towards the slow dimensions as the published lists do.
struct LongRopeFactors {
  std::vector<double> short_factor;
  std::vector<double> long_factor;
};
LongRopeFactors longrope_factors(const RandomModelSpec& spec);

// config.json as generated for the spec, before extra_config.
Json generated_config(const RandomModelSpec& spec, const SpecialIds& ids);

// config.json of gemma2, gemma3, phi3, mixtral and qwen3_moe
// (family_configs.cpp), before extra_config.
Json family_config(const RandomModelSpec& spec, const SpecialIds& ids);
bool has_family_config(const RandomModelSpec& spec);

// Qwen/Qwen2.5-VL-7B-Instruct's config.json at the spec's shapes
// (qwen_vl_config.cpp), before extra_config.
Json qwen2_5_vl_config(const RandomModelSpec& spec, const SpecialIds& ids);

// Every key of Gemma's text model, as the text-only file writes them; what
// gemma3's text_config holds before the keys equal to their defaults go.
Json gemma_text_config(const RandomModelSpec& spec, const SpecialIds& ids);

// config.json from spec.published_config (published_config.cpp), before
// extra_config.
Json published_config(const RandomModelSpec& spec, const SpecialIds& ids);

// Writes each of extra_config's keys over `config`.
void apply_extra_config(const RandomModelSpec& spec, Json& config);

// Pretty-printed as the Hub's files are, with a final newline.
std::string text_of(const Json& json);

}  // namespace quire::engine::modelgen::detail
