// Qwen2ForCausalLM: biases on the q, k and v projections (none on o or the
// MLP). A sliding window applies only with "use_sliding_window", to layers
// from "max_window_layers" on, or where "layer_types" says so.

#include "architectures.h"

namespace quire::engine::architectures {

const Architecture& qwen2() {
  static const Architecture architecture{"Qwen2ForCausalLM", "Qwen2", [](ModelConfig& config) {
                                           config.attention_bias = true;
                                           config.attention_output_bias = false;
                                           config.mlp_bias = false;
                                           apply_qwen_windows(config);
                                         }};
  return architecture;
}

void apply_qwen_windows(ModelConfig& config) {
  const int window = static_cast<int>(config.sliding_window.value_or(0));
  for (std::size_t i = 0; i < config.sliding_windows.size(); ++i) {
    bool sliding = false;
    if (!config.layer_types.empty()) {
      sliding = config.layer_types[i] == "sliding_attention";
    } else if (config.use_sliding_window.value_or(false)) {
      sliding = static_cast<int>(i) >= config.max_window_layers.value_or(28);
    }
    config.sliding_windows[i] = sliding ? window : 0;
  }
}

}  // namespace quire::engine::architectures
