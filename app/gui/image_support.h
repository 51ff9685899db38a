#pragma once

// Whether the loaded model sees the images attached to a message, in one
// place, and what the window says when it does not.

#include <QString>
#include <optional>

#include "engine_messages.h"

namespace quire::gui {

// True when images attached to a message reach `model`: the generator takes
// images (engine::kGeneratorTakesImages), the model's directory has a vision tower the engine
// loaded (ModelInfo::has_vision), and it runs here (remote engines are text-only).
bool model_sees_images(const std::optional<ModelInfo>& model);
// The same with the generator's support given, so that both answers can be tested.
bool model_sees_images(const std::optional<ModelInfo>& model, bool generator_takes_images);

// For the pending attachments: "<model> cannot see images; they will be kept
// with the chat but not sent to it." With the reason a tower the model has
// cannot be used (ModelInfo::vision_problem): "<model> cannot see images:
// <reason>. They will be kept with the chat but not sent to it."
QString images_kept_not_sent_note(const QString& model_name, const QString& reason = {});

// On a reply to a message with images the model did not see.
QString reply_without_images_note(const QString& model_name);

}  // namespace quire::gui
