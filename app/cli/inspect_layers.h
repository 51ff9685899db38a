#pragma once

// How quire-cli inspect shows a model's layers: each projection's format,
// fused projections, sparse layers' router and experts, and which layers
// attend through a sliding window.

#include <nlohmann/json.hpp>
#include <string>

#include "quire/engine/runtime/model_description.h"

namespace quire::cli {

nlohmann::ordered_json linear_json(const engine::LinearDescription& linear);
std::string linear_text(const engine::LinearDescription& linear);

nlohmann::ordered_json layer_json(const engine::ModelDescription& model, std::size_t index);
std::string layer_text(const engine::ModelDescription& model, std::size_t index);

// {"formats": ["exl3"], "codebooks": ["MUL1"], "kinds": {"attention": {...},
// ...}}: engine::summarize_weights as JSON, per kind the parameters, the mean
// stored bits per weight and, for EXL3, the mean trellis bits.
nlohmann::ordered_json weights_json(const engine::ModelDescription& model);

// "Mixtral, 8 experts, 2 per token" and the like; empty for a dense model.
std::string experts_text(const engine::ModelConfig& config);

}  // namespace quire::cli
