#include <algorithm>
#include <cstddef>

#include "byte_math.h"
#include "packing.h"

namespace quire::engine::detail {
namespace {

// Steps of the fraction search: 1/2^20 of a 24 GiB device is 24 KiB, far
// below any module, and 20 halvings keep the search cheap.
constexpr std::int64_t kBalanceSteps = std::int64_t{1} << 20;

// In-order packing at the smallest fraction of every capacity that still
// places everything. Fitting only gets easier as the fraction grows, so a
// binary search finds it; at the full capacities it must fit.
Packing tightest_packing(const std::vector<ModuleNeed>& needs,
                         const std::vector<std::int64_t>& capacity, std::int64_t device_scratch,
                         const Prepaid& prepaid) {
  Packing best = pack_in_order(needs, capacity, device_scratch, -1, prepaid);
  if (!best.complete) return best;
  std::int64_t low = 0;  // treated as not fitting: a fit there shows up at step 1
  std::int64_t high = kBalanceSteps;
  std::vector<std::int64_t> scaled(capacity.size());
  while (high - low > 1) {
    const std::int64_t middle = low + (high - low) / 2;
    for (std::size_t i = 0; i < capacity.size(); ++i) {
      scaled[i] = scale_floor(capacity[i], middle, kBalanceSteps);
    }
    Packing trial = pack_in_order(needs, scaled, device_scratch, -1, prepaid);
    if (trial.complete) {
      high = middle;
      best = std::move(trial);
    } else {
      low = middle;
    }
  }
  return best;
}

}  // namespace

Packing pack_balanced(const std::vector<ModuleNeed>& needs,
                      const std::vector<std::int64_t>& capacity, std::int64_t device_scratch,
                      const Prepaid& prepaid) {
  Packing result;
  result.module_slot.assign(needs.size(), -1);
  result.used.assign(capacity.size(), 0);
  std::size_t first = 0;  // the first module not yet given a device
  for (std::size_t device = 0; device < capacity.size() && first < needs.size(); ++device) {
    const std::vector<ModuleNeed> rest(needs.begin() + static_cast<std::ptrdiff_t>(first),
                                       needs.end());
    const std::vector<std::int64_t> rest_capacity(
        capacity.begin() + static_cast<std::ptrdiff_t>(device), capacity.end());
    // The prepaid device counted from this one on, or not at all once passed.
    Prepaid rest_prepaid = prepaid;
    rest_prepaid.slot =
        prepaid.slot >= static_cast<int>(device) ? prepaid.slot - static_cast<int>(device) : -1;
    const Packing stage = tightest_packing(rest, rest_capacity, device_scratch, rest_prepaid);
    if (!stage.complete) break;  // only when called with needs that do not fit
    std::size_t taken = 0;
    while (taken < rest.size() && stage.module_slot[taken] == 0) {
      result.module_slot[first + taken] = static_cast<int>(device);
      ++taken;
    }
    result.used[device] = stage.used[0];
    first += taken;
  }
  result.complete = first == needs.size();
  // Every module placed before the loop reached the prepaid device.
  if (prepaid.slot >= 0 && static_cast<std::size_t>(prepaid.slot) < capacity.size()) {
    const auto s = static_cast<std::size_t>(prepaid.slot);
    result.used[s] = std::max(result.used[s], prepaid.total());
    result.complete = result.complete && result.used[s] <= capacity[s];
  }
  return result;
}

}  // namespace quire::engine::detail
