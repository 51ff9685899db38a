#pragma once

// A chat's own settings between the store's shape (ChatSettings, what chat
// and preset files hold) and the chat settings panel's (ChatOverrides). The
// one conversion: the chat settings dialog and the presets page both use it,
// so a field added to both shapes reaches both places.

#include "quire/app/store/chat_types.h"
#include "quire/ui/chat_settings_panel.h"

namespace quire::presets {

ui::ChatOverrides to_overrides(const store::ChatSettings& settings);
// The tools the user always allowed are no field of the panel: the result
// has none.
store::ChatSettings to_chat_settings(const ui::ChatOverrides& overrides);

// DRY, XTC, top-nσ and mirostat between the store's and the panel's shapes.
ui::TunedSampling to_ui(const store::TunedSampling& tuned);
store::TunedSampling to_store(const ui::TunedSampling& tuned);

}  // namespace quire::presets
