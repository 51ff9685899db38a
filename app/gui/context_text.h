#pragma once

// How big one conversation may grow, in the words the status bar uses, so the
// status bar, the settings and the footer's gauge state the same figure.

#include <QString>

#include "engine_messages.h"
#include "quire/engine/generator/image_input.h"

namespace quire::gui {

// "256-token context: the model's limit" when the model's max_position_embeddings
// decided it, else "8,192-token context".
QString context_summary(const ModelInfo& info);

// "Ready · demo-model · 256-token context: the model's limit · prompt: ChatML",
// ending "· sees images" for a model that does (vision_status.h).
QString ready_text(const ModelInfo& info,
                   bool generator_takes_images = engine::kGeneratorTakesImages);
// Its tooltip: the same words, then why a model with a vision tower does
// not see images, where it does not.
QString ready_tooltip(const ModelInfo& info,
                      bool generator_takes_images = engine::kGeneratorTakesImages);

}  // namespace quire::gui
