#include "quire/app/presets/preset_overrides.h"

#include "quire/app/presets/chat_settings_overrides.h"
#include "quire/app/presets/preset.h"

namespace quire::presets {

ui::ChatOverrides preset_overrides(const store::ChatSettings& settings) {
  return to_overrides(preset_values(settings));
}

store::ChatSettings preset_settings(const ui::ChatOverrides& overrides) {
  return preset_values(to_chat_settings(overrides));
}

}  // namespace quire::presets
