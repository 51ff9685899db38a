#pragma once

// What a file's first bytes say it is, and whether it runs to its format's
// end. Qt's decoders pad a JPEG cut short with grey and say nothing, so
// decode_image checks the file's structure itself before decoding.

#include <QByteArray>
#include <QString>
#include <string_view>

#include "quire/engine/vision/image_file_type.h"

namespace quire::images::detail {

using SniffedFormat = vision::ImageFileType;

inline SniffedFormat sniff_format(const QByteArray& bytes) {
  return vision::sniff_image_file_type(
      std::string_view(bytes.constData(), static_cast<std::size_t>(bytes.size())));
}
// "PNG", "GIF", ...; "" for Unknown.
inline QString sniffed_format_name(SniffedFormat format) {
  const std::string_view name = vision::format_name(format);
  return QString::fromLatin1(name.data(), static_cast<qsizetype>(name.size()));
}

// Empty when a PNG, JPEG, WebP, GIF or BMP file holds all of itself (the
// PNG's IEND chunk, the JPEG's end-of-image marker after its last scan, the
// WebP's RIFF length, the GIF's trailer after its blocks, the BMP's rows);
// otherwise where it stops, for the message.
QString truncation_problem(SniffedFormat format, const QByteArray& bytes);

}  // namespace quire::images::detail
