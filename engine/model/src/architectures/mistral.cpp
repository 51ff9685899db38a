// MistralForCausalLM: Llama's layers without biases, and a sliding attention
// window on every layer unless config.json sets "sliding_window" to null.

#include "architectures.h"

namespace quire::engine::architectures {

const Architecture& mistral() {
  static const Architecture architecture{.name = "MistralForCausalLM",
                                         .label = "Mistral",
                                         .apply = apply_mistral_layers,
                                         // MistralConfig's default: a file without the key slides
                                         // over 4096 tokens (one that writes null does not).
                                         .defaults = R"({"sliding_window": 4096})"};
  return architecture;
}

void apply_mistral_layers(ModelConfig& config) {
  config.attention_bias = false;
  config.attention_output_bias = false;
  config.mlp_bias = false;
  apply_window_everywhere(config);
}

void apply_window_everywhere(ModelConfig& config) {
  const int window = static_cast<int>(config.sliding_window.value_or(0));
  config.sliding_windows.assign(config.sliding_windows.size(), window);
}

void apply_layer_types(ModelConfig& config, const std::function<bool(int)>& sliding) {
  const int window = static_cast<int>(config.sliding_window.value_or(0));
  for (std::size_t i = 0; i < config.sliding_windows.size(); ++i) {
    const bool slides = config.layer_types.empty() ? sliding(static_cast<int>(i))
                                                   : config.layer_types[i] == "sliding_attention";
    config.sliding_windows[i] = slides ? window : 0;
  }
}

}  // namespace quire::engine::architectures
