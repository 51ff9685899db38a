#pragma once

// How a model's linear layers are stored, summed up for people (quire-cli
// inspect, the settings' plan, the memory panel): the formats, the bits per
// weight of each kind of tensor (attention, MLP, experts, router, head) and,
// for EXL3, the trellis width and codebook.

#include <map>
#include <string>
#include <vector>

#include "quire/engine/runtime/model_description.h"

namespace quire::engine {

struct WeightsSummary {
  // One kind of tensor.
  struct Kind {
    std::string name;  // "attention", "MLP", "experts", "router", "head"
    double parameters = 0;
    double bits_per_weight = 0;  // stored, with scales, zero points and padding
    double trellis_bits = 0;     // EXL3: the codes' mean width; 0 otherwise
  };
  std::vector<std::string> formats;    // "exl3", "F16", ... in name order
  std::vector<std::string> codebooks;  // EXL3's: "MCG", "MUL1", ...
  std::vector<Kind> kinds;             // in the order above; absent kinds left out
  double bits_per_weight = 0;          // over every linear weight
  bool trellis = false;                // some weights are EXL3

  // "EXL3, codebook MUL1: attention 4 bits, MLP 3.5 bits, head 6 bits (4.1
  // bits per weight stored, with scales and padding)"
  std::string text() const;
};

WeightsSummary summarize_weights(const ModelDescription& model);

}  // namespace quire::engine
