// LlamaForCausalLM: Llama 1, 2 and 3 (and the many models that share its shape).
// Biases only where config.json's attention_bias / mlp_bias ask for them; no
// sliding window.

#include "architectures.h"

namespace quire::engine::architectures {

const Architecture& llama() {
  static const Architecture architecture{"LlamaForCausalLM", "Llama", [](ModelConfig& config) {
                                           config.attention_output_bias = config.attention_bias;
                                         }};
  return architecture;
}

}  // namespace quire::engine::architectures
