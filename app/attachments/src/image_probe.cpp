#include "quire/app/attachments/image_probe.h"

#include <QBuffer>
#include <QImageReader>
#include <QLocale>

#include "quire/app/store/image_bytes.h"

namespace quire::attachments {
namespace {

// Qt's format names of the formats a chat takes, with their MIME types.
struct AttachableFormat {
  const char* qt_name;
  const char* mime_type;
  const char* title;
};
constexpr AttachableFormat kAttachableFormats[] = {
    {"png", "image/png", "PNG"}, {"jpeg", "image/jpeg", "JPEG"}, {"webp", "image/webp", "WebP"},
    {"gif", "image/gif", "GIF"}, {"bmp", "image/bmp", "BMP"},
};

const AttachableFormat* attachable_format(const QByteArray& qt_name) {
  for (const AttachableFormat& format : kAttachableFormats) {
    if (qt_name == format.qt_name) return &format;
  }
  return nullptr;
}

const AttachableFormat* format_of_mime(const QString& mime_type) {
  for (const AttachableFormat& format : kAttachableFormats) {
    if (mime_type == QLatin1String(format.mime_type)) return &format;
  }
  return nullptr;
}

ProbeResult refuse(const QString& error) {
  return ProbeResult{std::nullopt, error};
}

QString quoted(const QString& name) {
  return QStringLiteral("“%1”").arg(name);
}

// JPEG decoders fill a cut-off file with grey and call it a success; a whole
// file ends with the End Of Image marker (padding zeros may follow it).
bool jpeg_is_whole(const QByteArray& bytes) {
  qsizetype end = bytes.size();
  while (end > 0 && bytes.at(end - 1) == '\0')
    --end;
  return end >= 2 && static_cast<unsigned char>(bytes.at(end - 2)) == 0xff &&
         static_cast<unsigned char>(bytes.at(end - 1)) == 0xd9;
}

}  // namespace

int allocation_limit_mb(const AttachLimits& limits) {
  // Eight bytes a pixel: the widest format a reader decodes into (RGBA64).
  return static_cast<int>(limits.max_pixels * 8 / (1024 * 1024)) + 1;
}

QString attachable_formats_text() {
  return QStringLiteral("PNG, JPEG, WebP, GIF and BMP");
}

ProbeResult probe_image(const QByteArray& bytes, const QString& name, const AttachLimits& limits) {
  const QLocale locale = QLocale::c();
  if (bytes.isEmpty()) return refuse(QStringLiteral("%1 is empty.").arg(quoted(name)));
  if (bytes.size() > limits.max_bytes) {
    return refuse(QStringLiteral("%1 is %2; an image can be at most %3. Scale it down or save "
                                 "it as JPEG first.")
                      .arg(quoted(name), locale.formattedDataSize(bytes.size()),
                           locale.formattedDataSize(limits.max_bytes)));
  }
  QBuffer buffer;
  buffer.setData(bytes);
  buffer.open(QIODevice::ReadOnly);
  QImageReader reader(&buffer);
  reader.setAutoTransform(true);
  // Qt refuses to decode past 128 MB by default: a 48-megapixel photo needs
  // more. The pixel limit below is what guards memory here.
  reader.setAllocationLimit(allocation_limit_mb(limits));
  const QByteArray qt_format = reader.format();  // from the content, not a name
  const AttachableFormat* format = attachable_format(qt_format);
  if (format == nullptr) {
    const AttachableFormat* sniffed = format_of_mime(store::sniff_image_mime_type(bytes));
    if (sniffed != nullptr) {
      // Its signature says it is one of ours, but no reader takes it: a
      // missing plugin (WebP) or a header too damaged to recognise.
      return refuse(
          QStringLiteral("%1 looks like a %2 image, but it cannot be read: %3 images "
                         "need Qt's image format plugins "
                         "(qt6-image-formats-plugins), or the file is damaged.")
              .arg(quoted(name), QLatin1String(sniffed->title), QLatin1String(sniffed->title)));
    }
    if (!qt_format.isEmpty()) {
      return refuse(QStringLiteral("%1 is a %2 image; images can be attached as %3. Save it in "
                                   "one of those formats first.")
                        .arg(quoted(name), QString::fromLatin1(qt_format.toUpper()),
                             attachable_formats_text()));
    }
    return refuse(QStringLiteral("%1 is not an image Quire can attach; it takes %2.")
                      .arg(quoted(name), attachable_formats_text()));
  }
  const QString title = QLatin1String(format->title);
  const QSize declared = reader.size();
  if (!declared.isValid() || declared.isEmpty()) {
    return refuse(QStringLiteral("%1 is a damaged %2 image: its header gives no size.")
                      .arg(quoted(name), title));
  }
  const qint64 pixels = static_cast<qint64>(declared.width()) * declared.height();
  if (pixels > limits.max_pixels) {
    return refuse(QStringLiteral("%1 is %2 × %3 pixels (%4 megapixels); an image can have at "
                                 "most %5 megapixels. Scale it down first.")
                      .arg(quoted(name))
                      .arg(declared.width())
                      .arg(declared.height())
                      .arg(pixels / 1'000'000)
                      .arg(limits.max_pixels / 1'000'000));
  }
  // Decoding all of it is the only way to know the data is whole; the size
  // is known to be within the limit now.
  const QImage decoded = reader.read();
  if (decoded.isNull() || (qt_format == "jpeg" && !jpeg_is_whole(bytes))) {
    const QString detail =
        decoded.isNull() ? reader.errorString() : QStringLiteral("it ends early");
    return refuse(QStringLiteral("%1 could not be read as a %2 image (%3). The file is damaged "
                                 "or cut short; save or download it again.")
                      .arg(quoted(name), title, detail));
  }
  store::ChatImage image;
  image.bytes = bytes;
  image.mime_type = QLatin1String(format->mime_type);
  image.width = decoded.width();
  image.height = decoded.height();
  return ProbeResult{image, QString()};
}

}  // namespace quire::attachments
