#include "quire/app/attachments/image_views.h"

#include <QBuffer>
#include <QImageReader>

#include "quire/app/attachments/image_probe.h"

namespace quire::attachments {

QImage decode_image(const QByteArray& bytes) {
  QBuffer buffer;
  buffer.setData(bytes);
  buffer.open(QIODevice::ReadOnly);
  QImageReader reader(&buffer);
  reader.setAutoTransform(true);
  // Stored images passed the probe: decode what it allowed.
  reader.setAllocationLimit(allocation_limit_mb(AttachLimits{}));
  return reader.read();
}

QImage make_thumbnail(const QByteArray& bytes, int max_side) {
  const QImage full = decode_image(bytes);
  if (full.isNull() || (full.width() <= max_side && full.height() <= max_side)) return full;
  return full.scaled(max_side, max_side, Qt::KeepAspectRatio, Qt::SmoothTransformation);
}

}  // namespace quire::attachments
