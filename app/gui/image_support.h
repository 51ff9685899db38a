#pragma once

// Whether the loaded model sees the images attached to a message, in one
// place, and what the window says when it does not.

#include <QString>
#include <optional>

#include "engine_messages.h"

namespace quire::gui {

// The generator's side of image input: a prompt's image positions taking the
// vision tower's embeddings in the forward pass (issue 48, the piece after the
// tower and the preprocessing). Until that piece lands and sets this to true,
// no model sees images, even a Gemma 3 directory whose vision weights load.
inline constexpr bool kGeneratorTakesImages = false;

// True when images attached to a message reach `model`: the generator takes
// images, the model's directory has a vision tower the engine loaded
// (ModelInfo::has_vision), and it runs here (remote engines are text-only).
bool model_sees_images(const std::optional<ModelInfo>& model);

// For the pending attachments: "<model> cannot see images; they will be kept
// with the chat but not sent to it."
QString images_kept_not_sent_note(const QString& model_name);

// On a reply to a message with images the model did not see.
QString reply_without_images_note(const QString& model_name);

}  // namespace quire::gui
