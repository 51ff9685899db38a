#pragma once

// quire-cli inspect's summary of how a model's linear layers are stored: the
// formats, the bits per weight of each kind of tensor (attention, MLP,
// experts, router, head) and, for EXL3, the trellis width and codebook.

#include <nlohmann/json.hpp>
#include <string>

#include "quire/engine/runtime/model_description.h"

namespace quire::cli {

// "EXL3, codebook MUL1: attention 4.0 bits, MLP 3.5 bits, head 6.0 bits (4.27
// bits per weight stored, with scales and padding)"
std::string weights_text(const engine::ModelDescription& model);

// {"formats": ["exl3"], "codebooks": ["MUL1"], "kinds": {"attention": {...},
// ...}}: per kind the parameters, the mean stored bits per weight and, for
// EXL3, the mean trellis bits.
nlohmann::ordered_json weights_json(const engine::ModelDescription& model);

}  // namespace quire::cli
