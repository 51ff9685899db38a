#pragma once

// Pictures of stored images for the window: thumbnails for the message box's
// pending strip and the chat's bubbles, the full picture for the full view.
// Both apply the EXIF orientation, as the image is meant to be seen.

#include <QByteArray>
#include <QImage>

namespace quire::attachments {

// The image decoded, orientation applied; a null QImage when it cannot be
// read (the store only holds images that were probed, so this is damage).
QImage decode_image(const QByteArray& bytes);

// The image scaled (smoothly, aspect kept) to fit a max_side × max_side
// square; a smaller image is not enlarged.
QImage make_thumbnail(const QByteArray& bytes, int max_side);

}  // namespace quire::attachments
