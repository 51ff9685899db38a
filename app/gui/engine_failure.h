#pragma once

// Turns what the engine throws into messages people can act on. Called in a
// catch block at the worker's boundary, the one place exceptions end.

#include <exception>

#include "engine_messages.h"
#include "quire/engine/planner/placement_plan.h"

namespace quire::gui {

EngineFailure no_model_failure();
EngineFailure missing_folder_failure(const QString& directory);
EngineFailure does_not_fit_failure(const engine::PlacementPlan& plan);
// The exception in flight (or `error`), classified.
EngineFailure failure_from(const std::exception_ptr& error);

}  // namespace quire::gui
