#pragma once

// Private: the JSON files of a generated model directory, as text.

#include <string>

#include "quire/engine/modelgen/random_model_spec.h"

namespace quire::engine::modelgen::detail {

inline constexpr int kBosId = 1;
inline constexpr int kEosId = 2;

std::string config_json(const RandomModelSpec& spec);
std::string generation_config_json();
std::string tokenizer_config_json(const RandomModelSpec& spec);

}  // namespace quire::engine::modelgen::detail
