#include "image_tiles.h"

#include <QBoxLayout>
#include <QWidget>

namespace quire::ui {

QImage shrunkToFit(const QImage& image, int side) {
  if (image.width() <= side && image.height() <= side) return image;
  return image.scaled(side, side, Qt::KeepAspectRatio, Qt::SmoothTransformation);
}

void removeTilesBeforeStretch(QBoxLayout* row) {
  while (row->count() > 1) {
    QLayoutItem* item = row->takeAt(0);
    delete item->widget();
    delete item;
  }
}

}  // namespace quire::ui
