#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace quire::engine::formats {

// How exllamav3's converter gives each tensor its EXL3 width for a target
// average (conversion/allocation.py): every tensor starts at the whole
// number below the target; then, in passes until no more fit, each group of
// tensors that share an input (a layer's q, k and v; its o; gate and up;
// down) takes one more bit if the budget (target x weights) still allows
// it, attention before the MLP and, within each, layers nearest either end
// of the stack first (they weigh most on the output), up to 8 bits.

struct Exl3BitGroup {
  std::int64_t weights = 0;  // of all its tensors
  int priority = 0;          // exllamav3: 2 for attention, 1 for the MLP
  int layer = 0;             // decoder layer
};

struct Exl3BitPlan {
  std::vector<int> bits;       // per group, in the order given
  double bits_per_weight = 0;  // their weighted mean
};

// `groups` in the order of the model's modules (layer by layer, each in the
// order it computes). Throws std::invalid_argument for a target outside 1
// to 8 or a group without weights.
Exl3BitPlan plan_exl3_bits(std::span<const Exl3BitGroup> groups, double bits_per_weight);

}  // namespace quire::engine::formats
