#pragma once

// A chat's own settings (the store's ChatSettings) between the store, the
// chat settings panel and the reply requests: each value the chat sets
// replaces the global one, each it leaves unset follows it.

#include "engine_messages.h"
#include "quire/app/store/chat_types.h"
#include "quire/ui/chat_settings_panel.h"

namespace quire::gui {

ui::ChatOverrides to_overrides(const store::ChatSettings& settings);
store::ChatSettings to_chat_settings(const ui::ChatOverrides& overrides);

// DRY, XTC, top-nσ and mirostat between the store's and the panel's shapes.
ui::TunedSampling to_ui(const store::TunedSampling& tuned);
store::TunedSampling to_store(const ui::TunedSampling& tuned);

// The global values a chat follows: the engine settings, and the longest
// reply the application allows.
ui::ChatDefaults chat_defaults(const ui::EngineSettings& settings, int max_new_tokens);

// Replaces in `request` what the chat overrides: the system prompt and prompt
// format it is rendered with, the sampling and the longest reply.
void apply_chat_settings(const store::ChatSettings& settings, ReplyRequest& request);

}  // namespace quire::gui
