#pragma once

#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "quire/engine/model/model_config.h"

namespace quire::engine {

// Tensor names of one decoder layer, without the ".weight" / ".q_weight" ...
// suffix. An empty name: the architecture has no such tensor.
struct LayerTensorNames {
  std::string attention_norm;         // before attention
  std::string attention_output_norm;  // after it, before the residual add (Gemma)
  std::string mlp_norm;               // before the MLP
  std::string mlp_output_norm;        // after it, before the residual add (Gemma)
  std::string q_proj, k_proj, v_proj, o_proj;
  std::string qkv_proj;        // q, k and v in one tensor (Phi-3), where the files hold it
  std::string q_norm, k_norm;  // read only where ModelConfig::qk_norm says so
  std::string gate_proj, up_proj, down_proj;
  std::string gate_up_proj;  // gate then up in one tensor (Phi-3), where the files hold it
  // Mixtures of experts: the router, and expert e's projections.
  std::string router;
  std::string experts;                              // prefix of every expert: "...mlp.experts."
  std::string expert_gate, expert_up, expert_down;  // "gate_proj" or Mixtral's "w1"

  std::string expert(int index, const std::string& projection) const {
    return experts + std::to_string(index) + "." + projection;
  }
};

// Where an architecture keeps each tensor of a layer, relative to the layer
// ("model.layers.3.").
struct LayerNaming {
  std::string_view attention_norm = "input_layernorm";
  std::string_view attention_output_norm = {};
  std::string_view mlp_norm = "post_attention_layernorm";
  std::string_view mlp_output_norm = {};
  std::string_view qkv_proj = {};
  std::string_view gate_up_proj = {};
  std::string_view mlp = "mlp.";  // the dense MLP's and the sparse block's prefix
  std::string_view router = "gate";
  std::string_view experts = "experts.";
  std::string_view expert_gate = "gate_proj";
  std::string_view expert_up = "up_proj";
  std::string_view expert_down = "down_proj";
};

// What distinguishes one supported architecture from another. Each lives in
// its own file under engine/model/src/architectures/.
struct Architecture {
  std::string_view name;   // config.json architectures[0], e.g. "LlamaForCausalLM"
  std::string_view label;  // for people, e.g. "Llama"
  // Applies the architecture's rules to a parsed config: which projections
  // carry biases, which layers use a sliding window, norms, activation...
  std::function<void(ModelConfig&)> apply;
  LayerNaming naming = {};
  // transformers' configuration defaults for the keys a file may leave out,
  // as a JSON object ("{}": none); Gemma 3's text_config omits many.
  std::string_view defaults = "{}";
  // Where the language model's tensors start, in the order tried: "model."
  // for causal language models; a multimodal wrapper nests it, spelled one
  // way or another depending on the transformers version that saved it.
  std::vector<std::string> text_prefixes = {"model."};
  // The output projection's names, in the order tried.
  std::vector<std::string> heads = {"lm_head"};
  // Whether the files hold more than the language model (a vision tower),
  // which Quire leaves on disk.
  bool multimodal = false;
  // The text_config model_types whose language model this reads, where a
  // wrapper holds more than one kind (empty: any): Mistral3ForConditionalGeneration
  // wraps Mistral Small 3's "mistral" and Ministral 3's "ministral3", whose
  // rotary scaling Quire does not run.
  std::vector<std::string> text_model_types = {};

  std::string embedding(std::string_view prefix) const;
  std::string final_norm(std::string_view prefix) const;
  LayerTensorNames layer(std::string_view prefix, int index) const;
};

// The architecture config.json names; throws ModelError naming it (and its
// model_type) and the supported list when Quire cannot run it.
const Architecture& find_architecture(const ModelConfig& config);

std::span<const Architecture* const> supported_architectures();

}  // namespace quire::engine
