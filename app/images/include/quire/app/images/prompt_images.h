#pragma once

// Image files made ready for a model's prompt: decoded here (Qt's readers),
// processed and laid out by the model's engine::ImagePreparer.

#include <QByteArray>
#include <filesystem>
#include <memory>

#include "quire/app/images/decode_image.h"
#include "quire/engine/image_prompts/image_preparer.h"

namespace quire::images {

// Throws DecodeError for a file decode_image refuses, vision::ImageError for
// an image the processor refuses.
std::shared_ptr<const engine::PreparedImage> prepare_image_file(engine::ImagePreparer& preparer,
                                                                const QByteArray& bytes);

// The model's preparer, its tower loaded, when it has a vision side whose
// images Quire gives to the model; else null with `why` set (a text-only
// model leaves it empty).
std::shared_ptr<engine::ImagePreparer> open_image_preparer(const std::filesystem::path& directory,
                                                           std::string& why);

}  // namespace quire::images
