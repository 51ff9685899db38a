#pragma once

// A preset's values in the chat settings panel's terms and back. The panel's
// "use tools" field is no part of a preset.

#include "quire/app/store/chat_types.h"
#include "quire/ui/chat_settings_panel.h"

namespace quire::presets {

ui::ChatOverrides preset_overrides(const store::ChatSettings& settings);
store::ChatSettings preset_settings(const ui::ChatOverrides& overrides);

}  // namespace quire::presets
