#include "quire/engine/model/architecture.h"

#include <array>

#include "architectures/architectures.h"
#include "quire/engine/model_error.h"

namespace quire::engine {

LayerTensorNames Architecture::layer(int index) const {
  const std::string prefix = "model.layers." + std::to_string(index) + ".";
  return LayerTensorNames{
      prefix + "input_layernorm",  prefix + "self_attn.q_proj", prefix + "self_attn.k_proj",
      prefix + "self_attn.v_proj", prefix + "self_attn.o_proj", prefix + "mlp.gate_proj",
      prefix + "mlp.up_proj",      prefix + "mlp.down_proj",    prefix + "post_attention_layernorm",
      prefix + "self_attn.q_norm", prefix + "self_attn.k_norm"};
}

std::span<const Architecture* const> supported_architectures() {
  static const std::array<const Architecture*, 4> list{
      &architectures::llama(), &architectures::mistral(), &architectures::qwen2(),
      &architectures::qwen3()};
  return list;
}

const Architecture& find_architecture(const ModelConfig& config) {
  std::string names;
  for (const Architecture* architecture : supported_architectures()) {
    if (architecture->name == config.architecture) return *architecture;
    names += (names.empty() ? "" : ", ") + std::string(architecture->name);
  }
  throw ModelError("architecture \"" + config.architecture + "\" is not supported; Quire runs " +
                   names);
}

}  // namespace quire::engine
