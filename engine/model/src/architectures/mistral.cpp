// MistralForCausalLM: Llama's layers without biases, and a sliding attention
// window on every layer when config.json sets "sliding_window".

#include "architectures.h"

namespace quire::engine::architectures {

const Architecture& mistral() {
  static const Architecture architecture{
      "MistralForCausalLM", "Mistral", [](ModelConfig& config) {
        config.attention_bias = false;
        config.attention_output_bias = false;
        config.mlp_bias = false;
        const int window = static_cast<int>(config.sliding_window.value_or(0));
        config.sliding_windows.assign(config.sliding_windows.size(), window);
      }};
  return architecture;
}

}  // namespace quire::engine::architectures
