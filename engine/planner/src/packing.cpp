#include "packing.h"

#include <algorithm>
#include <cstddef>

#include "byte_math.h"

namespace quire::engine::detail {

std::int64_t module_pages(const ModuleCost& module, std::int64_t pages,
                          std::int64_t window_pool_pages) {
  if (!module.in_window_pool || window_pool_pages == 0) return pages;
  return std::min(pages, window_pool_pages);
}

std::vector<ModuleNeed> module_needs(const std::vector<ModuleCost>& modules, std::int64_t pages,
                                     int staging_slots, std::int64_t window_pool_pages) {
  // One ring per device, each slot as large as the largest offloaded layer.
  std::int64_t slot_bytes = 0;
  for (const ModuleCost& module : modules) {
    if (module.cache_in_host_memory)
      slot_bytes = std::max(slot_bytes, mul_sat(module.cache_bytes_per_page, pages));
  }
  const std::int64_t ring = mul_sat(slot_bytes, staging_slots);
  std::vector<ModuleNeed> needs;
  needs.reserve(modules.size());
  for (const ModuleCost& module : modules) {
    ModuleNeed need;
    need.weights = module.weight_bytes;
    if (module.cache_in_host_memory) {
      need.host_cache = mul_sat(module.cache_bytes_per_page, pages);
      need.staging = ring;
    } else {
      need.cache = add_sat(
          mul_sat(module.cache_bytes_per_page, module_pages(module, pages, window_pool_pages)),
          module.cache_fixed_bytes);
    }
    need.extra_scratch = module.extra_scratch_bytes;
    need.total = add_sat(add_sat(need.weights, need.cache), need.extra_scratch);
    needs.push_back(need);
  }
  return needs;
}

std::int64_t host_cache_bytes(const std::vector<ModuleNeed>& needs) {
  std::int64_t bytes = 0;
  for (const ModuleNeed& need : needs)
    bytes = add_sat(bytes, need.host_cache);
  return bytes;
}

std::int64_t Prepaid::total() const {
  return add_sat(add_sat(cache, staging), scratch);
}

Prepaid fix_cache(std::vector<ModuleNeed>& needs, int slot, std::int64_t device_scratch) {
  Prepaid prepaid;
  if (slot < 0) return prepaid;
  prepaid.slot = slot;
  prepaid.scratch = device_scratch;
  for (ModuleNeed& need : needs) {
    prepaid.cache = add_sat(prepaid.cache, need.cache);
    // One ring for all offloaded layers, as on any device.
    prepaid.staging = std::max(prepaid.staging, need.staging);
    need.total = add_sat(need.weights, need.extra_scratch);
    need.cache = 0;
    need.staging = 0;
  }
  return prepaid;
}

Packing pack_in_order(const std::vector<ModuleNeed>& needs,
                      const std::vector<std::int64_t>& capacity, std::int64_t device_scratch,
                      int spill_slot, const Prepaid& prepaid) {
  Packing packing;
  packing.module_slot.assign(needs.size(), -1);
  packing.used.assign(capacity.size(), 0);
  std::vector<bool> holds_any(capacity.size(), false);
  std::vector<bool> holds_ring(capacity.size(), false);
  const int devices = static_cast<int>(capacity.size());
  const bool prepaid_here = prepaid.slot >= 0 && prepaid.slot < devices;
  if (prepaid_here) {
    const auto s = static_cast<std::size_t>(prepaid.slot);
    packing.used[s] = prepaid.total();
    holds_any[s] = true;
    holds_ring[s] = true;
  }
  int slot = 0;
  bool placed_all = true;
  for (std::size_t i = 0; i < needs.size(); ++i) {
    bool placed = false;
    while (slot < devices) {
      const auto s = static_cast<std::size_t>(slot);
      // The device scratch is paid once, by the first module a device takes.
      // So is the staging ring, by the first offloaded layer.
      std::int64_t cost = holds_any[s] ? needs[i].total : add_sat(needs[i].total, device_scratch);
      if (!holds_ring[s]) cost = add_sat(cost, needs[i].staging);
      const std::int64_t after = add_sat(packing.used[s], cost);
      if (slot == spill_slot || after <= capacity[s]) {
        packing.used[s] = after;
        holds_any[s] = true;
        if (needs[i].staging > 0) holds_ring[s] = true;
        packing.module_slot[i] = slot;
        placed = true;
        break;
      }
      ++slot;
    }
    if (!placed) {
      placed_all = false;
      break;
    }
  }
  packing.complete = placed_all;
  if (placed_all && spill_slot >= 0 && spill_slot < devices) {
    const auto s = static_cast<std::size_t>(spill_slot);
    packing.complete = packing.used[s] <= capacity[s];
  }
  if (prepaid_here) {
    const auto s = static_cast<std::size_t>(prepaid.slot);
    packing.complete = packing.complete && packing.used[s] <= capacity[s];
  }
  return packing;
}

int smallest_module(const std::vector<ModuleNeed>& needs) {
  int best = -1;
  for (std::size_t i = 0; i < needs.size(); ++i) {
    if (best < 0 || needs[i].total < needs[static_cast<std::size_t>(best)].total) {
      best = static_cast<int>(i);
    }
  }
  return best;
}

int largest_module(const std::vector<ModuleNeed>& needs) {
  int best = -1;
  for (std::size_t i = 0; i < needs.size(); ++i) {
    if (best < 0 || needs[i].total > needs[static_cast<std::size_t>(best)].total) {
      best = static_cast<int>(i);
    }
  }
  return best;
}

std::int64_t smallest_module_need(const std::vector<ModuleNeed>& needs,
                                  std::int64_t device_scratch) {
  const int best = smallest_module(needs);
  if (best < 0) return 0;
  return add_sat(needs[static_cast<std::size_t>(best)].total, device_scratch);
}

}  // namespace quire::engine::detail
