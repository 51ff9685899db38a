#pragma once

// Turns what the engine throws into messages people can act on. Called in a
// catch block at the worker's boundary, the one place exceptions end.

#include <exception>
#include <optional>

#include "engine_messages.h"
#include "quire/engine/planner/placement_plan.h"

namespace quire::gui {

EngineFailure no_model_failure();
EngineFailure missing_folder_failure(const QString& directory);
// What keeps `directory` from being a model folder at all (no such folder, no
// config.json, no weights, no tokenizer), worded for someone who chose the
// wrong folder rather than for a damaged download; nullopt when it has the
// files a model needs (the engine then reads them and says what is wrong
// inside them).
std::optional<EngineFailure> model_folder_failure(const QString& directory);
EngineFailure does_not_fit_failure(const engine::PlacementPlan& plan);
// The exception in flight (or `error`), classified; an EngineFailure thrown
// as such is returned as it is.
EngineFailure failure_from(const std::exception_ptr& error);

}  // namespace quire::gui
