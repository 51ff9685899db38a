#pragma once

// Recognising image files by their first bytes, without decoding them: the
// chat store and the chat file reader check that what is stored as an image
// is one of the formats a chat may hold (app/attachments then decodes it
// with Qt's image readers).

#include <QByteArray>
#include <QString>
#include <QStringList>

namespace quire::store {

// The MIME types a chat's images may have, in the order they are named to
// the user: PNG, JPEG, WebP, GIF, BMP.
QStringList chat_image_mime_types();

// The MIME type that `bytes` start like ("image/png", ...), or an empty
// string when they are none of chat_image_mime_types().
QString sniff_image_mime_type(const QByteArray& bytes);

}  // namespace quire::store
