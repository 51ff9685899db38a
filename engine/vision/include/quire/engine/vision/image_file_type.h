#pragma once

// What kind of image file some bytes are, from the signature its format's
// specification puts at the start. One reading for the server (which checks
// what a data: URL holds), the chat store (which checks what it keeps) and
// the decoder (which names what it cannot read).

#include <string_view>

namespace quire::vision {

enum class ImageFileType { Unknown, Png, Jpeg, WebP, Gif, Bmp, Tiff, Heif, Avif, Svg, Psd };

ImageFileType sniff_image_file_type(std::string_view bytes);

// "image/png", ...; "" for Unknown.
std::string_view media_type(ImageFileType type);

// "PNG", "JPEG", ...; "" for Unknown.
std::string_view format_name(ImageFileType type);

}  // namespace quire::vision
