#pragma once

// The vision tower in host memory, priced after the rest of the plan.

#include <optional>

#include "quire/engine/planner/placement_plan.h"
#include "quire/engine/planner/placement_request.h"

namespace quire::engine::detail {

// Nothing without request.vision_tower. Else the tower's bytes against host
// memory: where a device is the machine's memory (PlanDevice::host_memory),
// what `plan` leaves free on the first such device after its reserve; else
// request.host's free memory after its reserve (unchecked without one);
// less, either way, the offloaded cache pages (plan.host_cache).
std::optional<VisionTowerPlacement> place_vision_tower(const PlacementRequest& request,
                                                       const PlacementPlan& plan);

}  // namespace quire::engine::detail
