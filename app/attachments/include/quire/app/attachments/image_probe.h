#pragma once

// What the window checks when an image is attached (a file chosen, dropped or
// pasted): that it is a PNG, JPEG, WebP, GIF or BMP file Qt can read, within
// the limits on bytes and pixels, and whole. The pixel limit is checked on
// the size its header declares, before anything is decoded, so a small file
// that claims a huge picture (a decompression bomb) is refused without
// allocating it.

#include <QByteArray>
#include <QString>
#include <optional>

#include "quire/app/store/chat_types.h"

namespace quire::attachments {

struct AttachLimits {
  qint64 max_bytes = 20LL * 1024 * 1024;  // what a chat file and the store carry well
  qint64 max_pixels = 50'000'000;         // 50 megapixels: any camera's photo, no bomb
};

struct ProbeResult {
  // The image as the store keeps it: the bytes untouched, the MIME type from
  // its format, the size it is shown at (EXIF orientation applied).
  std::optional<store::ChatImage> image;
  // Why it was refused, naming `name`, in sentences that say what to do.
  QString error;
};

// `name` is what the user knows the image by (a file name, "the pasted image").
ProbeResult probe_image(const QByteArray& bytes, const QString& name,
                        const AttachLimits& limits = {});

// The decoding allowance (QImageReader::setAllocationLimit, in MB) that an
// image within `limits` needs.
int allocation_limit_mb(const AttachLimits& limits);

// The formats the user is told about: "PNG, JPEG, WebP, GIF and BMP".
QString attachable_formats_text();

}  // namespace quire::attachments
