#pragma once

// What a file's first bytes say it is, and whether it runs to its format's
// end. Qt's decoders pad a JPEG cut short with grey and say nothing, so
// decode_image checks the file's structure itself before decoding.

#include <QByteArray>
#include <QString>

namespace quire::images::detail {

enum class SniffedFormat { Unknown, Png, Jpeg, WebP, Gif, Bmp, Tiff, Heif, Avif, Svg, Psd };

SniffedFormat sniff_format(const QByteArray& bytes);
// "PNG", "GIF", ...; "" for Unknown.
QString sniffed_format_name(SniffedFormat format);

// Empty when a PNG, JPEG or WebP file holds all of itself (the PNG's IEND
// chunk, the JPEG's end-of-image marker after its last scan, the WebP's RIFF
// length); otherwise where it stops, for the message.
QString truncation_problem(SniffedFormat format, const QByteArray& bytes);

}  // namespace quire::images::detail
