#pragma once

// A chat's own settings (the store's ChatSettings) between the store, the
// chat settings panel and the reply requests: each value the chat sets
// replaces the global one, each it leaves unset follows it.

#include "engine_messages.h"
#include "quire/app/presets/chat_settings_overrides.h"
#include "quire/app/store/chat_types.h"
#include "quire/ui/chat_settings_panel.h"

namespace quire::gui {

// The store's and the panel's shapes convert in one place, shared with the
// presets page.
using presets::to_chat_settings;
using presets::to_overrides;
using presets::to_store;
using presets::to_ui;

// The global values a chat follows: the engine settings, and the longest
// reply the application allows.
ui::ChatDefaults chat_defaults(const ui::EngineSettings& settings, int max_new_tokens);

// Replaces in `request` what the chat overrides: the system prompt and prompt
// format it is rendered with, the sampling, the longest reply, the banned
// strings and the biases by text.
void apply_chat_settings(const store::ChatSettings& settings, ReplyRequest& request);

}  // namespace quire::gui
