#pragma once

// A message's images in the chat file: an array of
// {"mime_type", "width", "height", "data"} with the bytes as base64.

#include <QJsonArray>
#include <QJsonValue>
#include <QList>
#include <QString>

#include "quire/app/store/chat_types.h"

namespace quire::store::detail {

QJsonArray chat_images_to_json(const QList<ChatImage>& images);

// Reads the "images" member of a message (absent or null: none). On a problem
// returns false with *where set to the member at fault, relative to the
// message ("images[1].data"), and *problem to what is wrong with it.
bool chat_images_from_json(const QJsonValue& value, QList<ChatImage>* out, QString* where,
                           QString* problem);

}  // namespace quire::store::detail
