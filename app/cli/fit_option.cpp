// --fit: a plan that does not fit is changed to the nearest one that does,
// and the line on stderr says what was given up. Without it the refusal names
// what --fit would do.

#include <iostream>

#include "engine_options.h"
#include "quire/engine/model_error.h"
#include "quire/engine/runtime/fit_options.h"

namespace quire::cli {

engine::RuntimeOptions EngineOptions::fitted(const engine::ModelDescription& model,
                                             const kernels::Backend& backend,
                                             engine::RuntimeOptions options) const {
  const std::vector<kernels::DeviceInfo> infos = backend.devices();
  const engine::PlacementPlan plan =
      engine::plan_placement(engine::placement_request(model, infos, options));
  if (plan.fits) return options;
  const std::optional<engine::FitSuggestion> suggestion =
      engine::suggest_fit(model, infos, options);
  if (!suggestion) throw engine::ModelError(plan.problem);
  if (!fit) {
    std::string message = plan.problem + "; --fit would use: " + suggestion->change;
    if (!suggestion->alternative.empty()) {
      message += "; --cache-residence offloaded would fit too: " + suggestion->alternative;
    }
    throw engine::ModelError(message);
  }
  std::cerr << "quire-cli: --fit: " << suggestion->change << '\n';
  return engine::with_fit(std::move(options), *suggestion);
}

}  // namespace quire::cli
