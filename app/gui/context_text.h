#pragma once

// How big one conversation may grow, in the words the status bar uses, so the
// status bar, the settings and the footer's gauge state the same figure.

#include <QString>

#include "engine_messages.h"

namespace quire::gui {

// "256-token context: the model's limit" when the model's max_position_embeddings
// decided it, else "8,192-token context".
QString context_summary(const ModelInfo& info);

// "Ready · demo-model · 256-token context: the model's limit · prompt: ChatML".
QString ready_text(const ModelInfo& info);

}  // namespace quire::gui
