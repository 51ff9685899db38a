#include "quire/engine/formats/exl3_plan.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>
#include <tuple>

namespace quire::engine::formats {

Exl3BitPlan plan_exl3_bits(std::span<const Exl3BitGroup> groups, double bits_per_weight) {
  if (!(bits_per_weight >= 1.0 && bits_per_weight <= 8.0)) {
    throw std::invalid_argument("EXL3 codes 1 to 8 bits per weight, not " +
                                std::to_string(bits_per_weight));
  }
  const int base = static_cast<int>(std::floor(bits_per_weight));
  std::int64_t weights = 0;
  int last_layer = 0;
  for (const Exl3BitGroup& group : groups) {
    if (group.weights <= 0) throw std::invalid_argument("an EXL3 group without weights");
    weights += group.weights;
    last_layer = std::max(last_layer, group.layer);
  }
  Exl3BitPlan plan;
  plan.bits.assign(groups.size(), base);
  // The budget in whole bits, as exllamav3 truncates it.
  const auto budget = static_cast<std::int64_t>(bits_per_weight * double(weights));
  std::int64_t spent = weights * base;

  std::vector<std::size_t> order(groups.size());
  std::iota(order.begin(), order.end(), 0);
  const auto key = [&](std::size_t i) {
    const Exl3BitGroup& g = groups[i];
    return std::make_tuple(-g.priority, std::min(g.layer, last_layer - g.layer), g.layer, i);
  };
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return key(a) < key(b); });
  for (bool raised = true; raised && spent < budget;) {
    raised = false;
    for (const std::size_t i : order) {
      const std::int64_t cost = plan.bits[i] < 8 ? groups[i].weights : 0;
      if (cost > 0 && spent + cost <= budget) {
        ++plan.bits[i];
        spent += cost;
        raised = true;
      }
    }
  }
  plan.bits_per_weight = weights > 0 ? double(spent) / double(weights) : 0.0;
  return plan;
}

}  // namespace quire::engine::formats
