#include "quire/app/store/image_bytes.h"

#include <QCryptographicHash>

#include "quire/app/store/chat_types.h"
#include "quire/engine/vision/image_file_type.h"

namespace quire::store {

QStringList chat_image_mime_types() {
  return {QStringLiteral("image/png"), QStringLiteral("image/jpeg"), QStringLiteral("image/webp"),
          QStringLiteral("image/gif"), QStringLiteral("image/bmp")};
}

QString sniff_image_mime_type(const QByteArray& bytes) {
  const vision::ImageFileType type = vision::sniff_image_file_type(
      std::string_view(bytes.constData(), static_cast<std::size_t>(bytes.size())));
  // A BMP needs room for its smallest header (14 bytes, then a 12-byte core
  // header) to be one the store keeps.
  if (type == vision::ImageFileType::Bmp && bytes.size() < 26) return {};
  const std::string_view name = vision::media_type(type);
  const QString media = QString::fromLatin1(name.data(), static_cast<qsizetype>(name.size()));
  return chat_image_mime_types().contains(media) ? media : QString();
}

QByteArray ChatImage::content_hash() const {
  return QCryptographicHash::hash(bytes, QCryptographicHash::Sha256);
}

}  // namespace quire::store
