#include "file_structure.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
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

std::uint32_t little_endian(const QByteArray& bytes, qsizetype i, int width) {
  std::uint32_t value = 0;
  for (int k = width - 1; k >= 0; --k)
    value = (value << 8) | byte_at(bytes, i + k);
  return value;
}

// A GIF's blocks up to its trailer: extensions and images are each a run
// of sub-blocks ended by an empty one, colour tables sized by their flags.
QString gif_problem(const QByteArray& bytes) {
  const qsizetype n = bytes.size();
  const QString cut = QStringLiteral("it ends before its trailer");
  if (n < 13) return QStringLiteral("it ends inside its header");
  const auto table_bytes = [](std::uint8_t flags) {
    return (flags & 0x80) != 0 ? qsizetype{3} << ((flags & 0x07) + 1) : qsizetype{0};
  };
  qsizetype pos = 13 + table_bytes(byte_at(bytes, 10));
  const auto skip_sub_blocks = [&] {
    while (pos < n) {
      const std::uint8_t length = byte_at(bytes, pos);
      pos += 1 + length;
      if (length == 0) return true;
    }
    return false;
  };
  while (pos < n) {
    const std::uint8_t block = byte_at(bytes, pos);
    if (block == 0x3b) return {};
    if (block == 0x21) {  // extension: label, then sub-blocks
      pos += 2;
      if (!skip_sub_blocks()) return cut;
    } else if (block == 0x2c) {  // image: descriptor, colour table, LZW size, data
      if (pos + 10 > n) return cut;
      pos += 10 + table_bytes(byte_at(bytes, pos + 9)) + 1;
      if (!skip_sub_blocks()) return cut;
    } else {
      return QStringLiteral("it holds an unknown block (0x%1) where a block must begin")
          .arg(block, 2, 16, QLatin1Char('0'));
    }
  }
  return cut;
}

// A BMP's pixels after its headers: the rows an uncompressed bitmap's size
// and depth need, or, compressed, the length its file header announces.
QString bmp_problem(const QByteArray& bytes) {
  const qsizetype n = bytes.size();
  if (n < 26) return QStringLiteral("it ends inside its header");
  const std::uint64_t pixels_at = little_endian(bytes, 10, 4);
  const std::uint32_t info_size = little_endian(bytes, 14, 4);
  std::int64_t width = 0;
  std::int64_t height = 0;
  std::uint32_t depth = 0;
  std::uint32_t compression = 0;
  if (info_size == 12) {  // OS/2's core header: 16-bit sizes, never compressed
    width = little_endian(bytes, 18, 2);
    height = little_endian(bytes, 20, 2);
    depth = little_endian(bytes, 24, 2);
  } else {
    if (n < 34) return QStringLiteral("it ends inside its header");
    width = static_cast<std::int32_t>(little_endian(bytes, 18, 4));
    height = static_cast<std::int32_t>(little_endian(bytes, 22, 4));
    depth = little_endian(bytes, 28, 2);
    compression = little_endian(bytes, 30, 4);
  }
  // BI_RGB and BI_BITFIELDS rows are whole 32-bit words, bottom-up or top-down.
  if (compression == 0 || compression == 3) {
    const std::uint64_t row =
        ((static_cast<std::uint64_t>(std::max<std::int64_t>(width, 0)) * depth + 31) / 32) * 4;
    const std::uint64_t need = pixels_at + row * static_cast<std::uint64_t>(std::llabs(height));
    if (need > static_cast<std::uint64_t>(n))
      return QStringLiteral("it holds %1 of the %2 bytes its pixels need").arg(n).arg(need);
    return {};
  }
  const std::uint64_t announced = little_endian(bytes, 2, 4);
  if (pixels_at > static_cast<std::uint64_t>(n) || announced > static_cast<std::uint64_t>(n))
    return QStringLiteral("it holds %1 of the %2 bytes its header announces")
        .arg(n)
        .arg(std::max(announced, pixels_at));
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
    case SniffedFormat::Gif:
      return gif_problem(bytes);
    case SniffedFormat::Bmp:
      return bmp_problem(bytes);
    default:
      return {};
  }
}

}  // namespace quire::images::detail
