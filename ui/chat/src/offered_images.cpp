#include "quire/ui/offered_images.h"

#include <QBuffer>
#include <QFileInfo>
#include <QImage>
#include <QMimeData>
#include <QUrl>

namespace quire::ui {

bool is_image_file_name(const QString& path) {
  static const QStringList kSuffixes = {QStringLiteral("png"),  QStringLiteral("jpg"),
                                        QStringLiteral("jpeg"), QStringLiteral("webp"),
                                        QStringLiteral("gif"),  QStringLiteral("bmp")};
  return kSuffixes.contains(QFileInfo(path).suffix().toLower());
}

QList<OfferedImage> offered_images(const QMimeData* data) {
  QList<OfferedImage> offered;
  if (data == nullptr) return offered;
  for (const QUrl& url : data->urls()) {
    if (!url.isLocalFile()) continue;
    const QFileInfo file(url.toLocalFile());
    if (is_image_file_name(file.filePath())) {
      offered << OfferedImage{file.fileName(), file.filePath(), {}};
    }
  }
  if (!offered.isEmpty() || !data->hasImage()) return offered;
  // A picture copied from a browser or an image editor: the bytes the
  // application offered as PNG when there are any, else Qt's decoded image
  // written as PNG (lossless).
  QByteArray bytes = data->data(QStringLiteral("image/png"));
  if (bytes.isEmpty()) {
    const auto image = qvariant_cast<QImage>(data->imageData());
    if (image.isNull()) return offered;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    image.save(&buffer, "PNG");
  }
  offered << OfferedImage{QStringLiteral("pasted image"), QString(), bytes};
  return offered;
}

}  // namespace quire::ui
