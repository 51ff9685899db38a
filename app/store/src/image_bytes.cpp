#include "quire/app/store/image_bytes.h"

#include <QCryptographicHash>

#include "quire/app/store/chat_types.h"

namespace quire::store {

QStringList chat_image_mime_types() {
  return {QStringLiteral("image/png"), QStringLiteral("image/jpeg"), QStringLiteral("image/webp"),
          QStringLiteral("image/gif"), QStringLiteral("image/bmp")};
}

QString sniff_image_mime_type(const QByteArray& bytes) {
  // The signatures each format's specification puts at the start of a file.
  if (bytes.startsWith(QByteArrayLiteral("\x89PNG\r\n\x1a\n"))) return QStringLiteral("image/png");
  if (bytes.startsWith(QByteArrayLiteral("\xff\xd8\xff"))) return QStringLiteral("image/jpeg");
  if (bytes.size() >= 12 && bytes.startsWith("RIFF") && bytes.mid(8, 4) == "WEBP") {
    return QStringLiteral("image/webp");
  }
  if (bytes.startsWith("GIF87a") || bytes.startsWith("GIF89a")) return QStringLiteral("image/gif");
  // "BM" and room for the smallest header (14 bytes, then a 12-byte core header).
  if (bytes.size() >= 26 && bytes.startsWith("BM")) return QStringLiteral("image/bmp");
  return {};
}

QByteArray ChatImage::content_hash() const {
  return QCryptographicHash::hash(bytes, QCryptographicHash::Sha256);
}

}  // namespace quire::store
