#pragma once

#include <optional>
#include <span>

#include "quire/engine/planner/fit_suggestion.h"
#include "quire/engine/runtime/model_runtime.h"

namespace quire::engine {

// The nearest options that fit when `options` do not (suggest_fit), with the
// smaller cache formats priced for this model: fp16, then q8, q6, q4. When the
// whole cache would fit in host memory (CacheResidence::Offloaded), that is
// named as the suggestion's alternative. Nothing when the options fit or
// nothing near them does.
std::optional<FitSuggestion> suggest_fit(const ModelDescription& model,
                                         std::span<const kernels::DeviceInfo> devices,
                                         const RuntimeOptions& options);

// `options` changed as `suggestion` says.
RuntimeOptions with_fit(RuntimeOptions options, const FitSuggestion& suggestion);

}  // namespace quire::engine
