#include "quire/engine/vision/image_file_type.h"

namespace quire::vision {
namespace {

bool has_at(std::string_view bytes, std::size_t offset, std::string_view magic) {
  return bytes.size() >= offset + magic.size() && bytes.substr(offset, magic.size()) == magic;
}

// An SVG is text: its root element near the start, perhaps after an XML
// declaration and white space.
bool looks_like_svg(std::string_view bytes) {
  std::string_view head = bytes.substr(0, 256);
  const std::size_t first = head.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return false;
  head.remove_prefix(first);
  if (head.starts_with("<svg")) return true;
  return head.starts_with("<?xml") && head.find("<svg") != std::string_view::npos;
}

}  // namespace

ImageFileType sniff_image_file_type(std::string_view bytes) {
  using namespace std::string_view_literals;
  if (has_at(bytes, 0, "\x89PNG\r\n\x1a\n"sv)) return ImageFileType::Png;
  if (has_at(bytes, 0, "\xff\xd8\xff"sv)) return ImageFileType::Jpeg;
  if (has_at(bytes, 0, "RIFF"sv) && has_at(bytes, 8, "WEBP"sv)) return ImageFileType::WebP;
  if (has_at(bytes, 0, "GIF87a"sv) || has_at(bytes, 0, "GIF89a"sv)) return ImageFileType::Gif;
  if (has_at(bytes, 0, "BM"sv)) return ImageFileType::Bmp;
  if (has_at(bytes, 0, "II*\0"sv) || has_at(bytes, 0, "MM\0*"sv)) return ImageFileType::Tiff;
  if (has_at(bytes, 4, "ftypheic"sv) || has_at(bytes, 4, "ftypheix"sv) ||
      has_at(bytes, 4, "ftypmif1"sv))
    return ImageFileType::Heif;
  if (has_at(bytes, 4, "ftypavif"sv)) return ImageFileType::Avif;
  if (has_at(bytes, 0, "8BPS"sv)) return ImageFileType::Psd;
  if (looks_like_svg(bytes)) return ImageFileType::Svg;
  return ImageFileType::Unknown;
}

std::string_view media_type(ImageFileType type) {
  switch (type) {
    case ImageFileType::Png:
      return "image/png";
    case ImageFileType::Jpeg:
      return "image/jpeg";
    case ImageFileType::WebP:
      return "image/webp";
    case ImageFileType::Gif:
      return "image/gif";
    case ImageFileType::Bmp:
      return "image/bmp";
    case ImageFileType::Tiff:
      return "image/tiff";
    case ImageFileType::Heif:
      return "image/heif";
    case ImageFileType::Avif:
      return "image/avif";
    case ImageFileType::Svg:
      return "image/svg+xml";
    case ImageFileType::Psd:
      return "image/vnd.adobe.photoshop";
    case ImageFileType::Unknown:
      break;
  }
  return {};
}

std::string_view format_name(ImageFileType type) {
  switch (type) {
    case ImageFileType::Png:
      return "PNG";
    case ImageFileType::Jpeg:
      return "JPEG";
    case ImageFileType::WebP:
      return "WebP";
    case ImageFileType::Gif:
      return "GIF";
    case ImageFileType::Bmp:
      return "BMP";
    case ImageFileType::Tiff:
      return "TIFF";
    case ImageFileType::Heif:
      return "HEIC";
    case ImageFileType::Avif:
      return "AVIF";
    case ImageFileType::Svg:
      return "SVG";
    case ImageFileType::Psd:
      return "Photoshop (PSD)";
    case ImageFileType::Unknown:
      break;
  }
  return {};
}

}  // namespace quire::vision
