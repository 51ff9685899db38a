// Qwen3ForCausalLM, the dense Qwen3 models: head_dim written out and often
// unlike hidden / heads (0.6B: 1024 hidden, 16 heads of 128), an RMSNorm over
// each query and key head before RoPE (q_norm, k_norm), biases only where
// attention_bias asks (on all four projections, as transformers' Qwen3
// attention makes them), none on the MLP, and Qwen2's sliding-window rule.

#include "architectures.h"

namespace quire::engine::architectures {

const Architecture& qwen3() {
  static const Architecture architecture{"Qwen3ForCausalLM", "Qwen3", [](ModelConfig& config) {
                                           config.attention_output_bias = config.attention_bias;
                                           config.mlp_bias = false;
                                           config.qk_norm = true;
                                           apply_qwen_windows(config);
                                         }};
  return architecture;
}

}  // namespace quire::engine::architectures
