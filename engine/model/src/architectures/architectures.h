#pragma once

// Private: one function per supported architecture, each in its own file.

#include "quire/engine/model/architecture.h"

namespace quire::engine::architectures {

const Architecture& llama();
const Architecture& mistral();
const Architecture& mixtral();
const Architecture& qwen2();
const Architecture& qwen3();
const Architecture& qwen3_moe();
const Architecture& qwen2_vl();
const Architecture& qwen2_5_vl();
const Architecture& qwen3_vl();
const Architecture& gemma2();
const Architecture& gemma3_text();
const Architecture& gemma3_multimodal();
const Architecture& phi3();
const Architecture& mistral3_multimodal();

// Qwen2's and Qwen3's sliding-window rule: layers from "max_window_layers" on
// when "use_sliding_window" is true, or as "layer_types" says.
void apply_qwen_windows(ModelConfig& config);

// Every layer slides when "sliding_window" is set (Mistral, Mixtral, Phi-3,
// Qwen3-MoE with its window on).
void apply_window_everywhere(ModelConfig& config);

// Mistral's layers, which Mixtral and Phi-3 share: no biases anywhere, and
// the window on every layer.
void apply_mistral_layers(ModelConfig& config);

// Layers marked "sliding_attention" in "layer_types" get "sliding_window";
// without the list, `sliding(layer)` decides (each Gemma its own pattern).
void apply_layer_types(ModelConfig& config, const std::function<bool(int)>& sliding);

}  // namespace quire::engine::architectures
