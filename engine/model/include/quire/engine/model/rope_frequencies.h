#pragma once

#include <cstdint>
#include <vector>

#include "quire/engine/model/model_config.h"

namespace quire::engine {

// Rotary inverse frequencies as Hugging Face computes them (in FP32), after
// rope_scaling. Dynamic (NTK) scaling and longrope depend on the sequence
// length: they change once `sequence_length` exceeds the original context.
struct RopeFrequencies {
  std::vector<float> inv_freq;  // rotary_dim / 2 values
  float attention_factor = 1.0f;
};

RopeFrequencies rope_frequencies(const ModelConfig& config, std::int64_t sequence_length);

// Gemma 3's sliding-window layers: rope_local_theta, unscaled.
RopeFrequencies local_rope_frequencies(const ModelConfig& config);

// Whether the frequencies change with the sequence length (dynamic scaling,
// and longrope's switch to its long factors past the original context).
bool rope_depends_on_length(const ModelConfig& config);

}  // namespace quire::engine
