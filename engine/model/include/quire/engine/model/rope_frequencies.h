#pragma once

#include <cstdint>
#include <vector>

#include "quire/engine/model/model_config.h"

namespace quire::engine {

// Rotary inverse frequencies as Hugging Face computes them (in FP32), after
// rope_scaling. Dynamic (NTK) scaling depends on the sequence length: it
// applies once `sequence_length` exceeds max_position_embeddings.
struct RopeFrequencies {
  std::vector<float> inv_freq;  // rotary_dim / 2 values
  float attention_factor = 1.0f;
};

RopeFrequencies rope_frequencies(const ModelConfig& config, std::int64_t sequence_length);

// Whether the frequencies change with the sequence length.
bool rope_depends_on_length(const ModelConfig& config);

}  // namespace quire::engine
