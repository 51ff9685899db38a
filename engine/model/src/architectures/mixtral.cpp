// MixtralForCausalLM: Mistral's attention, and a sparse MLP on every layer
// ("block_sparse_moe"): a router ("gate") over num_local_experts experts, of
// which the top num_experts_per_tok run, their router weights renormalized to
// sum to one; each expert a SiLU-gated MLP named w1 (gate), w3 (up), w2 (down).

#include "architectures.h"

namespace quire::engine::architectures {

const Architecture& mixtral() {
  static const Architecture architecture{
      .name = "MixtralForCausalLM",
      .label = "Mixtral",
      .apply =
          [](ModelConfig& config) {
            apply_mistral_layers(config);
            config.moe.normalize_top_k = true;
            config.moe.sparse_layers.assign(config.sliding_windows.size(), true);
          },
      .naming = {.mlp = "block_sparse_moe.",
                 .expert_gate = "w1",
                 .expert_up = "w3",
                 .expert_down = "w2"},
      // MixtralConfig's defaults.
      .defaults = R"({"num_local_experts": 8, "num_experts_per_tok": 2})"};
  return architecture;
}

}  // namespace quire::engine::architectures
