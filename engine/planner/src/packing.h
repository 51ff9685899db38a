#pragma once

// The one placement rule every mode shares: modules in order, each device
// filled until the next module does not fit, then the next device. Modes differ
// only in the capacities they hand it.

#include <cstdint>
#include <vector>

#include "quire/engine/planner/placement_request.h"

namespace quire::engine::detail {

// One module's bytes at a given cache size.
struct ModuleNeed {
  std::int64_t weights = 0;
  std::int64_t cache = 0;  // on the device
  std::int64_t extra_scratch = 0;
  std::int64_t total = 0;  // weights + cache + extra_scratch, saturated
  // An offloaded layer: its pages in host memory, and the staging ring its
  // device pays once, with the first offloaded layer it takes.
  std::int64_t host_cache = 0;
  std::int64_t staging = 0;
};

// Pages the module's cache holds when the main pool holds `pages`: fewer for
// a window pool's layer (PlacementRequest::window_pool_pages).
std::int64_t module_pages(const ModuleCost& module, std::int64_t pages,
                          std::int64_t window_pool_pages);
// `staging_slots`: slots of the ring on each device holding offloaded layers.
std::vector<ModuleNeed> module_needs(const std::vector<ModuleCost>& modules, std::int64_t pages,
                                     int staging_slots, std::int64_t window_pool_pages);
// The host memory every offloaded layer's pages take together.
std::int64_t host_cache_bytes(const std::vector<ModuleNeed>& needs);

// What a device pays before it takes any module: with the cache fixed on one
// device (PlacementRequest::cache_device), every layer's pages, the staging
// ring the offloaded layers share, and its scratch, which attention there
// uses even when no module is placed there.
struct Prepaid {
  int slot = -1;  // device position; -1: nothing is prepaid
  std::int64_t cache = 0;
  std::int64_t staging = 0;
  std::int64_t scratch = 0;

  std::int64_t total() const;
};

// Takes every layer's device cache and staging ring out of `needs` and puts
// them on device position `slot`. With `slot` < 0 the needs stay as they are
// and nothing is prepaid.
Prepaid fix_cache(std::vector<ModuleNeed>& needs, int slot, std::int64_t device_scratch);

struct Packing {
  std::vector<int> module_slot;  // per module: device position, -1 when unplaced
  // Per device position: needs placed there + device scratch + staging ring.
  std::vector<std::int64_t> used;
  bool complete = false;  // every module placed within its device's capacity
};

// Greedy in-order packing. A device that cannot take the next module is left
// behind for good (order is kept), which is why a device too small for any
// module ends up unused. When spill_slot >= 0 that device takes every module
// that reaches it regardless of capacity, so an overflow shows where it lands;
// complete is then whether it stayed within capacity. A device with a
// prepaid share starts with it (and its scratch paid); complete also needs
// that share to fit.
//
// For "does everything fit" this greedy is optimal among in-order placements:
// by induction each device ends at least as far along the module list as in any
// other in-order placement, because costs are non-negative.
Packing pack_in_order(const std::vector<ModuleNeed>& needs,
                      const std::vector<std::int64_t>& capacity, std::int64_t device_scratch,
                      int spill_slot = -1, const Prepaid& prepaid = {});

// Balanced placement, for needs that fit the capacities in order. Device by
// device: find the smallest fraction f (in steps of 1/2^20) at which the
// modules not yet placed still fit this and the later devices, each limited to
// f of its usable memory; give this device what in-order packing at f gives
// it; go on with the next device and the rest. The fullest device is thus as
// empty as any in-order placement allows, and the devices after it are
// balanced among themselves the same way (a large embedding on device 0 does
// not leave the last device idle).
Packing pack_balanced(const std::vector<ModuleNeed>& needs,
                      const std::vector<std::int64_t>& capacity, std::int64_t device_scratch,
                      const Prepaid& prepaid = {});

// The smallest amount a device must offer to hold any module at all: device
// scratch plus the cheapest module. kSaturated-safe; 0 without modules.
std::int64_t smallest_module_need(const std::vector<ModuleNeed>& needs,
                                  std::int64_t device_scratch);

// Index of the cheapest / dearest module (first on ties); -1 without modules.
int smallest_module(const std::vector<ModuleNeed>& needs);
int largest_module(const std::vector<ModuleNeed>& needs);

}  // namespace quire::engine::detail
