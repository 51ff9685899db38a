#include <algorithm>
#include <array>
#include <functional>
#include <stdexcept>
#include <string>

#include "quire/engine/formats/exl2_writer.h"

namespace quire::engine::formats {
namespace {

constexpr std::array<int, 6> kWidths = {2, 3, 4, 5, 6, 8};

int step_up(int bits) {
  const auto* next = std::upper_bound(kWidths.begin(), kWidths.end(), bits);
  return next == kWidths.end() ? 0 : *next;
}

int step_down(int bits) {
  const auto* at = std::lower_bound(kWidths.begin(), kWidths.end(), bits);
  return at == kWidths.begin() ? 0 : *(at - 1);
}

}  // namespace

double plan_bits_per_weight(std::span<const Exl2GroupSpec> plan) {
  double bits = 0.0;
  double rows = 0.0;
  for (const Exl2GroupSpec& group : plan) {
    bits += double(group.bits) * group.rows;
    rows += group.rows;
  }
  return rows > 0.0 ? bits / rows : 0.0;
}

std::vector<Exl2GroupSpec> plan_exl2_groups(std::int64_t in_features, double bits_per_weight,
                                            int group_size) {
  if (in_features <= 0 || in_features % 32 != 0 || group_size <= 0 || group_size % 32 != 0 ||
      !(bits_per_weight >= 2.0 && bits_per_weight <= 8.0)) {
    throw std::invalid_argument("EXL2 plan for " + std::to_string(in_features) + " inputs, " +
                                std::to_string(bits_per_weight) + " bits, groups of " +
                                std::to_string(group_size));
  }
  std::vector<Exl2GroupSpec> plan;
  for (std::int64_t row = 0; row < in_features; row += group_size) {
    plan.push_back({0, static_cast<int>(std::min<std::int64_t>(group_size, in_features - row))});
  }
  // Start every group at the widest legal width not above the target.
  const int base = *(std::upper_bound(kWidths.begin(), kWidths.end(), bits_per_weight) - 1);
  for (Exl2GroupSpec& group : plan)
    group.bits = base;
  const double target = bits_per_weight * double(in_features);
  double total = double(base) * double(in_features);
  // Raise groups one legal step at a time while that brings the total closer.
  for (Exl2GroupSpec& group : plan) {
    const int up = step_up(group.bits);
    if (up == 0) break;
    const double raised = total + double(up - group.bits) * group.rows;
    if (raised - target > target - total) break;
    group.bits = up;
    total = raised;
  }
  // A target that is a legal width: raise about a tenth of the groups one
  // step and lower enough of the others one step to keep the total.
  const int up = step_up(base);
  const int down = step_down(base);
  const bool uniform =
      std::all_of(plan.begin(), plan.end(), [&](const Exl2GroupSpec& g) { return g.bits == base; });
  if (uniform && up != 0 && down != 0 && plan.size() >= 3) {
    const std::size_t raised = std::max<std::size_t>(1, plan.size() / 10);
    for (std::size_t i = 0; i < raised; ++i) {
      plan[i].bits = up;
      total += double(up - base) * plan[i].rows;
    }
    for (std::size_t i = plan.size(); i-- > raised && total > target;) {
      plan[i].bits = down;
      total -= double(base - down) * plan[i].rows;
    }
  }
  // exllamav2's order: widths never increase along the permuted inputs.
  std::vector<int> widths;
  for (const Exl2GroupSpec& group : plan)
    widths.push_back(group.bits);
  std::sort(widths.begin(), widths.end(), std::greater<>());
  for (std::size_t i = 0; i < plan.size(); ++i)
    plan[i].bits = widths[i];
  return plan;
}

}  // namespace quire::engine::formats
