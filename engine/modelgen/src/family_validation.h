#pragma once

// Private: what validate() checks of the settings one family or another
// reads (Gemma's window pattern and soft-capping, Gemma 3's vision tower,
// Phi-3's rotary share and longrope, the experts of Mixtral and Qwen3-MoE).

#include "quire/engine/modelgen/random_model_spec.h"

namespace quire::engine::modelgen::detail {

// Throws std::invalid_argument naming the option, as validate() does.
void validate_family(const RandomModelSpec& spec);

}  // namespace quire::engine::modelgen::detail
