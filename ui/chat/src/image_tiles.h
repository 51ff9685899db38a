#pragma once

// What the rows of image thumbnails (the pending strip, a bubble's images)
// share.

#include <QImage>

class QBoxLayout;

namespace quire::ui {

// `image` scaled down (smoothly, aspect kept) to fit a side × side square;
// one that fits already is returned as it is, never enlarged.
QImage shrunkToFit(const QImage& image, int side);

// Deletes the tiles of a row whose last item is its trailing stretch.
void removeTilesBeforeStretch(QBoxLayout* row);

}  // namespace quire::ui
