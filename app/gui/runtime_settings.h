#pragma once

// The settings a user edits, as the engine's option structs. The pricer (the
// live plan) and the worker (the real load) both go through here, so the plan
// shown is the plan the load will make.

#include <span>
#include <vector>

#include "quire/engine/generator/generator.h"
#include "quire/engine/generator/sampler.h"
#include "quire/engine/runtime/model_runtime.h"
#include "quire/ui/settings_data.h"

namespace quire::gui {

inline constexpr int kPageSize = 256;

// `selected` are the backend indices the settings chose (selected_devices()),
// in the order the backend presents them. Throws std::invalid_argument naming
// the setting that cannot be used.
engine::RuntimeOptions runtime_options(const ui::EngineSettings& settings,
                                       const engine::ModelDescription& model,
                                       const std::vector<int>& selected);

// runtime_options for a backend that offers `devices`: a cache the settings
// put in host memory stays where it is on devices that are host memory
// (engine::effective_residence), so the plan and the memory panel count it
// once, on them.
engine::RuntimeOptions runtime_options(const ui::EngineSettings& settings,
                                       const engine::ModelDescription& model,
                                       const std::vector<int>& selected,
                                       std::span<const kernels::DeviceInfo> devices);

engine::GeneratorConfig generator_config(const ui::EngineSettings& settings);

engine::SamplingSettings sampling_settings(const ui::SamplingDefaults& defaults);

// The engine's drafting for the Settings' speculative decoding group: off
// unless the method is "ngram"; the draft length kept within the engine's
// bounds. Where a draft model's folder is to become engine settings.
// `draft_model_loaded`: whether the generator has a draft model; without
// one, "model" drafts nothing (the load said why).
engine::DraftSettings draft_settings(const ui::DraftDefaults& defaults, bool draft_model_loaded);

// Host-tier pages that `mebibytes` of host memory hold for this model.
int host_pages(const engine::ModelDescription& model, cache::CacheFormat format, int mebibytes);

}  // namespace quire::gui
