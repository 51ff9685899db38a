#pragma once

#include <string>

#include "quire/engine/planner/placement_plan.h"
#include "quire/engine/planner/placement_request.h"

namespace quire::engine {

// Decides, before anything is loaded, where every module and its share of the
// lazily allocated KV cache go, whether that fits, and the largest context that
// would. Pure and deterministic: the same request gives the same plan.
// Throws std::invalid_argument when request.validate() does.
PlacementPlan plan_placement(const PlacementRequest& request);

// A few lines for people: the verdict, then one line per device, then notes.
// Used by the CLI's inspect command and the memory panel.
std::string describe_plan(const PlacementPlan& plan);

}  // namespace quire::engine
