#pragma once

#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "quire/engine/model/model_config.h"

namespace quire::engine {

// Tensor names of one decoder layer (without the ".weight" / ".q_weight" ... suffix).
struct LayerTensorNames {
  std::string input_norm;
  std::string q_proj, k_proj, v_proj, o_proj;
  std::string gate_proj, up_proj, down_proj;
  std::string post_attention_norm;
  std::string q_norm, k_norm;  // read only where ModelConfig::qk_norm says so
};

// What distinguishes one supported architecture from another. Each lives in
// its own file under engine/model/src/architectures/.
struct Architecture {
  std::string_view name;   // config.json architectures[0], e.g. "LlamaForCausalLM"
  std::string_view label;  // for people, e.g. "Llama"
  // Applies the architecture's rules to a parsed config: which projections
  // carry biases and which layers use a sliding window.
  std::function<void(ModelConfig&)> apply;

  std::string embedding() const { return "model.embed_tokens"; }
  std::string final_norm() const { return "model.norm"; }
  std::string head() const { return "lm_head"; }
  LayerTensorNames layer(int index) const;
};

// The architecture config.json names; throws ModelError naming it and the
// supported list when Quire cannot run it.
const Architecture& find_architecture(const ModelConfig& config);

std::span<const Architecture* const> supported_architectures();

}  // namespace quire::engine
