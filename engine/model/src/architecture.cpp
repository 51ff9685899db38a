#include "quire/engine/model/architecture.h"

#include <array>

#include "architectures/architectures.h"
#include "quire/engine/model_error.h"

namespace quire::engine {

std::string Architecture::embedding(std::string_view prefix) const {
  return std::string(prefix) + "embed_tokens";
}

std::string Architecture::final_norm(std::string_view prefix) const {
  return std::string(prefix) + "norm";
}

LayerTensorNames Architecture::layer(std::string_view prefix, int index) const {
  const std::string layer = std::string(prefix) + "layers." + std::to_string(index) + ".";
  const auto named = [&](std::string_view relative) {
    return relative.empty() ? std::string() : layer + std::string(relative);
  };
  const std::string mlp = layer + std::string(naming.mlp);
  LayerTensorNames names;
  names.attention_norm = named(naming.attention_norm);
  names.attention_output_norm = named(naming.attention_output_norm);
  names.mlp_norm = named(naming.mlp_norm);
  names.mlp_output_norm = named(naming.mlp_output_norm);
  names.q_proj = layer + "self_attn.q_proj";
  names.k_proj = layer + "self_attn.k_proj";
  names.v_proj = layer + "self_attn.v_proj";
  names.o_proj = layer + "self_attn.o_proj";
  names.qkv_proj = named(naming.qkv_proj);
  names.q_norm = layer + "self_attn.q_norm";
  names.k_norm = layer + "self_attn.k_norm";
  names.gate_proj = mlp + "gate_proj";
  names.up_proj = mlp + "up_proj";
  names.down_proj = mlp + "down_proj";
  names.gate_up_proj = named(naming.gate_up_proj);
  names.router = mlp + std::string(naming.router);
  names.experts = mlp + std::string(naming.experts);
  names.expert_gate = naming.expert_gate;
  names.expert_up = naming.expert_up;
  names.expert_down = naming.expert_down;
  return names;
}

std::span<const Architecture* const> supported_architectures() {
  static const std::array<const Architecture*, 14> list{&architectures::llama(),
                                                        &architectures::mistral(),
                                                        &architectures::mixtral(),
                                                        &architectures::qwen2(),
                                                        &architectures::qwen3(),
                                                        &architectures::qwen3_moe(),
                                                        &architectures::gemma2(),
                                                        &architectures::gemma3_text(),
                                                        &architectures::gemma3_multimodal(),
                                                        &architectures::phi3(),
                                                        &architectures::qwen2_vl(),
                                                        &architectures::qwen2_5_vl(),
                                                        &architectures::qwen3_vl(),
                                                        &architectures::mistral3_multimodal()};
  return list;
}

const Architecture& find_architecture(const ModelConfig& config) {
  std::string names;
  for (const Architecture* architecture : supported_architectures()) {
    if (architecture->name == config.architecture) return *architecture;
    names += (names.empty() ? "" : ", ") + std::string(architecture->name);
  }
  const std::string type =
      config.model_type.empty() ? std::string() : " (model_type \"" + config.model_type + "\")";
  throw ModelError("architecture \"" + config.architecture + "\"" + type +
                   " is not supported; Quire runs " + names);
}

}  // namespace quire::engine
