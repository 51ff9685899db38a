// Phi3ForCausalLM (Phi-3, Phi-3.5-mini, Phi-4-mini): q, k and v in one
// projection ("qkv_proj", rows q then k then v) and gate and up in another
// ("gate_up_proj", gate first); RoPE on the first partial_rotary_factor of
// each head (Phi-4-mini: 0.75); longrope scaling in the 128k models; a
// sliding window on every layer when "sliding_window" is set; no biases.

#include "architectures.h"

namespace quire::engine::architectures {

const Architecture& phi3() {
  static const Architecture architecture{
      .name = "Phi3ForCausalLM",
      .label = "Phi-3",
      .apply = [](ModelConfig& config) { apply_mistral_layers(config); },
      .naming = {.qkv_proj = "self_attn.qkv_proj", .gate_up_proj = "mlp.gate_up_proj"}};
  return architecture;
}

}  // namespace quire::engine::architectures
