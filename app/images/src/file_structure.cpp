#include "file_structure.h"

#include <cstdint>
#include <cstring>

namespace quire::images::detail {

namespace {

std::uint8_t byte_at(const QByteArray& bytes, qsizetype i) {
  return static_cast<std::uint8_t>(bytes[i]);
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
