#pragma once

#include <QByteArray>
#include <QStringList>
#include <cstdint>

#include "quire/engine/vision/rgb_image.h"

namespace quire::images {

// What Quire reads at most. A file over max_bytes is refused before it is
// parsed; an image over max_pixels is refused from the size its header
// states, before any pixel memory is allocated (a decompression bomb, a few
// kilobytes claiming 100000x100000 pixels, costs nothing). Qt refuses on its
// own to allocate more than 256 MB for one image (QImageReader's allocation
// limit), about 64 megapixels: a larger max_pixels needs that limit raised.
struct ImageLimits {
  std::int64_t max_bytes = std::int64_t{64} * 1024 * 1024;
  std::int64_t max_pixels = std::int64_t{50} * 1000 * 1000;
};

// A file Quire cannot read: the message names the problem (empty, too
// large, not a supported format, truncated, corrupt) and what to do.
class DecodeError : public quire::vision::ImageError {
 public:
  using quire::vision::ImageError::ImageError;
};

// Decodes a PNG, JPEG, WebP, GIF (its first frame) or BMP file as
// transformers' image loading does:
// EXIF orientation applied (ImageOps.exif_transpose in load_image),
// grayscale and palette expanded to RGB, transparency composited over opaque
// white with PIL's alpha_composite arithmetic (image_transforms'
// convert_to_rgb). Throws DecodeError.
quire::vision::RgbImage decode_image(const QByteArray& bytes, const ImageLimits& limits = {});

// The formats decode_image reads on this system, for messages and file
// dialogs: "PNG", "JPEG", "GIF" and "BMP" always, "WebP" where Qt's WebP
// plugin (Debian's qt6-image-formats-plugins) is installed.
QStringList supported_image_formats();

}  // namespace quire::images
