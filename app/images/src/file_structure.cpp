#include "file_structure.h"

#include <cstdint>
#include <cstring>

namespace quire::images::detail {

namespace {

std::uint8_t byte_at(const QByteArray& bytes, qsizetype i) {
  return static_cast<std::uint8_t>(bytes[i]);
}

bool starts_with(const QByteArray& bytes, qsizetype offset, const char* magic) {
  return bytes.mid(offset, static_cast<qsizetype>(std::strlen(magic))) == magic;
}

std::uint32_t big_endian(const QByteArray& bytes, qsizetype i, int width) {
  std::uint32_t value = 0;
  for (int k = 0; k < width; ++k)
    value = (value << 8) | byte_at(bytes, i + k);
  return value;
}

QString png_problem(const QByteArray& bytes) {
  qsizetype pos = 8;  // the signature
  const qsizetype n = bytes.size();
  while (pos + 8 <= n) {
    const std::uint32_t length = big_endian(bytes, pos, 4);
    if (length > 0x7fffffffu) return QStringLiteral("a chunk claims %1 bytes").arg(length);
    const bool last = bytes.mid(pos + 4, 4) == "IEND";
    const qsizetype end = pos + 12 + static_cast<qsizetype>(length);
    if (end > n) return QStringLiteral("it ends inside a chunk, before its IEND chunk");
    if (last) return {};
    pos = end;
  }
  return QStringLiteral("it ends before its IEND chunk");
}

bool is_restart_or_stuffing(std::uint8_t marker) {
  return marker == 0x00 || (marker >= 0xd0 && marker <= 0xd7);
}

QString jpeg_problem(const QByteArray& bytes) {
  const qsizetype n = bytes.size();
  qsizetype pos = 2;  // after the start-of-image marker
  const QString cut = QStringLiteral("it ends before its end-of-image marker");
  while (true) {
    // Bytes between segments are tolerated by decoders; find the marker.
    while (pos < n && byte_at(bytes, pos) != 0xff)
      ++pos;
    while (pos < n && byte_at(bytes, pos) == 0xff)
      ++pos;  // fill bytes
    if (pos >= n) return cut;
    const std::uint8_t marker = byte_at(bytes, pos);
    ++pos;
    if (marker == 0xd9) return {};
    if (marker == 0x01 || (marker >= 0xd0 && marker <= 0xd7)) continue;  // no length
    if (pos + 2 > n) return cut;
    const qsizetype length = static_cast<qsizetype>(big_endian(bytes, pos, 2));
    if (length < 2) return QStringLiteral("a segment has an impossible length");
    pos += length;
    if (pos > n) return cut;
    if (marker != 0xda) continue;
    // After a start of scan comes entropy-coded data up to the next marker
    // that is neither a stuffed 0xff00 nor a restart marker.
    while (true) {
      while (pos < n && byte_at(bytes, pos) != 0xff)
        ++pos;
      if (pos + 1 >= n) return cut;
      const std::uint8_t next = byte_at(bytes, pos + 1);
      if (is_restart_or_stuffing(next)) {
        pos += 2;
      } else if (next == 0xff) {
        ++pos;
      } else {
        break;
      }
    }
  }
}

QString webp_problem(const QByteArray& bytes) {
  if (bytes.size() < 12) return QStringLiteral("it ends inside its header");
  std::uint32_t length = 0;
  for (int k = 3; k >= 0; --k)
    length = (length << 8) | byte_at(bytes, 4 + k);
  if (static_cast<std::uint64_t>(length) + 8 > static_cast<std::uint64_t>(bytes.size()))
    return QStringLiteral("it holds %1 of the %2 bytes its header announces")
        .arg(bytes.size())
        .arg(static_cast<std::uint64_t>(length) + 8);
  return {};
}

}  // namespace

SniffedFormat sniff_format(const QByteArray& bytes) {
  if (starts_with(bytes, 0, "\x89PNG\r\n\x1a\n")) return SniffedFormat::Png;
  if (bytes.size() >= 3 && byte_at(bytes, 0) == 0xff && byte_at(bytes, 1) == 0xd8 &&
      byte_at(bytes, 2) == 0xff)
    return SniffedFormat::Jpeg;
  if (starts_with(bytes, 0, "RIFF") && starts_with(bytes, 8, "WEBP")) return SniffedFormat::WebP;
  if (starts_with(bytes, 0, "GIF87a") || starts_with(bytes, 0, "GIF89a")) return SniffedFormat::Gif;
  if (starts_with(bytes, 0, "BM")) return SniffedFormat::Bmp;
  if (bytes.left(4) == QByteArray("II*\0", 4) || bytes.left(4) == QByteArray("MM\0*", 4))
    return SniffedFormat::Tiff;
  if (starts_with(bytes, 4, "ftypheic") || starts_with(bytes, 4, "ftypheix") ||
      starts_with(bytes, 4, "ftypmif1"))
    return SniffedFormat::Heif;
  if (starts_with(bytes, 4, "ftypavif")) return SniffedFormat::Avif;
  if (starts_with(bytes, 0, "8BPS")) return SniffedFormat::Psd;
  const QByteArray head = bytes.left(256).trimmed();
  if (head.startsWith("<svg") || (head.startsWith("<?xml") && head.contains("<svg")))
    return SniffedFormat::Svg;
  return SniffedFormat::Unknown;
}

QString sniffed_format_name(SniffedFormat format) {
  switch (format) {
    case SniffedFormat::Png:
      return QStringLiteral("PNG");
    case SniffedFormat::Jpeg:
      return QStringLiteral("JPEG");
    case SniffedFormat::WebP:
      return QStringLiteral("WebP");
    case SniffedFormat::Gif:
      return QStringLiteral("GIF");
    case SniffedFormat::Bmp:
      return QStringLiteral("BMP");
    case SniffedFormat::Tiff:
      return QStringLiteral("TIFF");
    case SniffedFormat::Heif:
      return QStringLiteral("HEIC");
    case SniffedFormat::Avif:
      return QStringLiteral("AVIF");
    case SniffedFormat::Svg:
      return QStringLiteral("SVG");
    case SniffedFormat::Psd:
      return QStringLiteral("Photoshop (PSD)");
    case SniffedFormat::Unknown:
      break;
  }
  return {};
}

QString truncation_problem(SniffedFormat format, const QByteArray& bytes) {
  switch (format) {
    case SniffedFormat::Png:
      return png_problem(bytes);
    case SniffedFormat::Jpeg:
      return jpeg_problem(bytes);
    case SniffedFormat::WebP:
      return webp_problem(bytes);
    default:
      return {};
  }
}

}  // namespace quire::images::detail
