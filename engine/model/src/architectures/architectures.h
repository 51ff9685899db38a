#pragma once

// Private: one function per supported architecture, each in its own file.

#include "quire/engine/model/architecture.h"

namespace quire::engine::architectures {

const Architecture& llama();
const Architecture& mistral();
const Architecture& qwen2();
const Architecture& qwen3();

// Qwen2's and Qwen3's sliding-window rule: layers from "max_window_layers" on
// when "use_sliding_window" is true, or as "layer_types" says.
void apply_qwen_windows(ModelConfig& config);

}  // namespace quire::engine::architectures
