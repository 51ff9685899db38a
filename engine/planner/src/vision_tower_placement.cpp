#include "vision_tower_placement.h"

#include <algorithm>
#include <string>

#include "byte_math.h"

namespace quire::engine::detail {
namespace {

std::string mib(std::int64_t whole) {
  return std::to_string(whole) + " MiB";
}

// "images cannot be read: the vision tower (SigLIP tower, Gemma 3 projector)
// needs 1101 MiB of host memory (812 MiB of weights, 289 MiB to read an
// image), and host memory has 600 MiB free after the 1024 MiB reserve and
// what the plan puts there; the model loads without it and refuses images —
// close programs that hold memory". Needs rounded up, free memory down.
std::string does_not_fit(const VisionTowerPlacement& tower, bool plan_uses_host) {
  return "images cannot be read: the vision tower (" + tower.name + ") needs " +
         mib(mib_ceil(tower.bytes)) + " of host memory (" + mib(mib_ceil(tower.weight_bytes)) +
         " of weights, " + mib(mib_ceil(tower.scratch_bytes)) +
         " to read an image), and host memory has " + mib(mib_floor(tower.usable)) +
         " free after the " + mib_exact_or_decimal(tower.reserve) + " MiB reserve" +
         (plan_uses_host ? " and what the plan puts there" : "") +
         "; the model loads without it and refuses images — close programs that hold memory" +
         (plan_uses_host ? ", or lower the context" : "") + " to read images";
}

}  // namespace

std::optional<VisionTowerPlacement> place_vision_tower(const PlacementRequest& request,
                                                       const PlacementPlan& plan) {
  if (!request.vision_tower) return std::nullopt;
  const VisionTowerCost& cost = *request.vision_tower;
  VisionTowerPlacement tower;
  tower.name = cost.name;
  tower.weight_bytes = cost.weight_bytes;
  tower.scratch_bytes = cost.scratch_bytes;
  tower.bytes = add_sat(cost.weight_bytes, cost.scratch_bytes);

  bool plan_uses_host = false;
  std::int64_t left = 0;
  const auto host_device =
      std::find_if(request.devices.begin(), request.devices.end(),
                   [](const PlanDevice& device) { return device.host_memory; });
  const auto slot = static_cast<std::size_t>(host_device - request.devices.begin());
  if (host_device != request.devices.end() && slot < plan.devices.size()) {
    // The machine's memory as a device: what the plan leaves there.
    const DevicePlacement& device = plan.devices[slot];
    tower.reserve = device.reserve;
    left = device.free_after - device.reserve;
    plan_uses_host = device.planned > 0;
  } else if (request.host) {
    tower.reserve = request.host->reserve_bytes;
    left = request.host->free_bytes - request.host->reserve_bytes;
  } else {
    return tower;  // no host memory given: not checked
  }
  if (plan.host_cache && plan.host_cache->bytes > 0) {
    left -= plan.host_cache->bytes;
    plan_uses_host = true;
  }
  tower.usable = std::max<std::int64_t>(0, left);
  tower.fits = tower.bytes <= tower.usable;
  if (!tower.fits) tower.problem = does_not_fit(tower, plan_uses_host);
  return tower;
}

}  // namespace quire::engine::detail
