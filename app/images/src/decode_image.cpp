#include "quire/app/images/decode_image.h"

#include <QBuffer>
#include <QImage>
#include <QImageReader>
#include <cstring>

#include "file_structure.h"

namespace quire::images {

namespace {

using detail::SniffedFormat;
using quire::vision::RgbImage;

[[noreturn]] void refuse(const QString& message) {
  throw DecodeError(message.toStdString());
}

QString megabytes(std::int64_t bytes) {
  return QString::number(static_cast<double>(bytes) / (1024.0 * 1024.0), 'f', 1);
}

QString supported_list() {
  return supported_image_formats().join(QLatin1String(", "));
}

bool webp_plugin_present() {
  return QImageReader::supportedImageFormats().contains("webp");
}

// PIL's alpha_composite of a straight-alpha pixel over opaque white, in its
// integer arithmetic (7 extra bits of precision, divisions by 255 done as
// shifts with rounding), so that composited pixels are PIL's to the byte.
std::uint8_t over_white(std::uint32_t value, std::uint32_t alpha) {
  if (alpha == 0) return 255;
  constexpr std::uint32_t kBits = 7;
  const std::uint32_t blend = 255 * (255 - alpha);
  const std::uint32_t out_alpha = alpha * 255 + blend;
  const std::uint32_t source_weight = alpha * 255 * 255 * (1u << kBits) / out_alpha;
  const std::uint32_t white_weight = 255 * (1u << kBits) - source_weight;
  const std::uint32_t sum = value * source_weight + 255 * white_weight + (0x80u << kBits);
  return static_cast<std::uint8_t>((((sum >> 8) + sum) >> 8) >> kBits);
}

RgbImage to_rgb(const QImage& decoded) {
  RgbImage out;
  out.width = decoded.width();
  out.height = decoded.height();
  out.rgb.resize(static_cast<std::size_t>(out.width) * static_cast<std::size_t>(out.height) * 3);
  std::uint8_t* dst = out.rgb.data();
  if (!decoded.hasAlphaChannel()) {
    const QImage rgb = decoded.convertToFormat(QImage::Format_RGB888);
    const auto row_bytes = static_cast<std::size_t>(out.width) * 3;
    for (int y = 0; y < out.height; ++y, dst += row_bytes)
      std::memcpy(dst, rgb.constScanLine(y), row_bytes);
    return out;
  }
  // Straight (not premultiplied) alpha, as PIL's RGBA holds it.
  const QImage rgba = decoded.convertToFormat(QImage::Format_RGBA8888);
  for (int y = 0; y < out.height; ++y) {
    const uchar* src = rgba.constScanLine(y);
    for (int x = 0; x < out.width; ++x, src += 4, dst += 3) {
      dst[0] = over_white(src[0], src[3]);
      dst[1] = over_white(src[1], src[3]);
      dst[2] = over_white(src[2], src[3]);
    }
  }
  return out;
}

}  // namespace

QStringList supported_image_formats() {
  QStringList formats{QStringLiteral("PNG"), QStringLiteral("JPEG")};
  if (webp_plugin_present()) formats << QStringLiteral("WebP");
  // BMP is read by QtGui itself, GIF by a plugin of the same package.
  formats << QStringLiteral("GIF") << QStringLiteral("BMP");
  return formats;
}

RgbImage decode_image(const QByteArray& bytes, const ImageLimits& limits) {
  if (bytes.isEmpty()) refuse(QStringLiteral("the image file is empty"));
  if (bytes.size() > limits.max_bytes)
    refuse(
        QStringLiteral("the image file is %1 MB, more than the %2 MB Quire reads; save it smaller "
                       "(fewer pixels or stronger compression) and attach it again")
            .arg(megabytes(bytes.size()), megabytes(limits.max_bytes)));

  const SniffedFormat format = detail::sniff_format(bytes);
  const QString name = detail::sniffed_format_name(format);
  if (format == SniffedFormat::Unknown)
    refuse(QStringLiteral("the file is not an image in a format Quire reads (%1)")
               .arg(supported_list()));
  if (format == SniffedFormat::WebP && !webp_plugin_present())
    refuse(QStringLiteral(
               "the image is WebP, which this installation cannot read: Qt's WebP plugin is "
               "missing (Debian: install qt6-image-formats-plugins); Quire reads %1")
               .arg(supported_list()));
  const QByteArray reader_format = format == SniffedFormat::Png    ? QByteArray("png")
                                   : format == SniffedFormat::Jpeg ? QByteArray("jpeg")
                                   : format == SniffedFormat::WebP ? QByteArray("webp")
                                   : format == SniffedFormat::Gif  ? QByteArray("gif")
                                   : format == SniffedFormat::Bmp  ? QByteArray("bmp")
                                                                   : QByteArray();
  if (reader_format.isEmpty())
    refuse(QStringLiteral("the image is %1, a format Quire does not read; convert it to one of %2")
               .arg(name, supported_list()));
  const QString truncated = detail::truncation_problem(format, bytes);
  if (!truncated.isEmpty())
    refuse(QStringLiteral("the %1 file is truncated (%2); the download or copy may be incomplete")
               .arg(name, truncated));

  QBuffer buffer;
  buffer.setData(bytes);
  buffer.open(QIODevice::ReadOnly);
  // An animated GIF gives its first frame, as PIL opens it.
  QImageReader reader(&buffer, reader_format);
  reader.setAutoTransform(true);
  // The header's size, read before anything is allocated for the pixels.
  const QSize size = reader.size();
  if (!size.isValid() || size.isEmpty())
    refuse(
        QStringLiteral("the %1 data is corrupt: its header gives no valid image size").arg(name));
  const std::int64_t pixels = std::int64_t{size.width()} * size.height();
  if (pixels > limits.max_pixels)
    refuse(QStringLiteral(
               "the image is %1x%2 pixels (%3 megapixels), more than the %4 megapixels Quire "
               "reads; scale it down and attach it again")
               .arg(size.width())
               .arg(size.height())
               .arg(QString::number(static_cast<double>(pixels) / 1e6, 'f', 1),
                    QString::number(static_cast<double>(limits.max_pixels) / 1e6, 'f', 1)));
  QImage image;
  if (!reader.read(&image) || image.isNull())
    refuse(QStringLiteral("the %1 data is corrupt (%2)").arg(name, reader.errorString()));
  return to_rgb(image);
}

}  // namespace quire::images
