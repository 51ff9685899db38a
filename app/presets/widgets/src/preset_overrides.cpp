#include "quire/app/presets/preset_overrides.h"

#include "quire/app/presets/preset.h"

namespace quire::presets {

ui::ChatOverrides preset_overrides(const store::ChatSettings& settings) {
  ui::ChatOverrides overrides;
  overrides.system_prompt = settings.system_prompt;
  overrides.temperature = settings.temperature;
  overrides.top_p = settings.top_p;
  overrides.min_p = settings.min_p;
  overrides.repetition_penalty = settings.repetition_penalty;
  overrides.max_new_tokens = settings.max_new_tokens;
  overrides.prompt_format = settings.prompt_format;
  return overrides;
}

store::ChatSettings preset_settings(const ui::ChatOverrides& overrides) {
  store::ChatSettings settings;
  settings.system_prompt = overrides.system_prompt;
  settings.temperature = overrides.temperature;
  settings.top_p = overrides.top_p;
  settings.min_p = overrides.min_p;
  settings.repetition_penalty = overrides.repetition_penalty;
  settings.max_new_tokens = overrides.max_new_tokens;
  settings.prompt_format = overrides.prompt_format;
  return preset_values(settings);
}

}  // namespace quire::presets
