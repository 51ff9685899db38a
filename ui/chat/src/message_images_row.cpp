#include "message_images_row.h"

#include <QHBoxLayout>
#include <QPixmap>
#include <QToolButton>
#include <algorithm>

#include "image_tiles.h"

namespace quire::ui {

MessageImagesRow::MessageImagesRow(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("messageImages"));
  row_ = new QHBoxLayout(this);
  row_->setContentsMargins(0, 0, 0, 0);
  row_->setSpacing(6);
  row_->addStretch(1);
  hide();
}

void MessageImagesRow::setImages(const QList<QImage>& thumbnails) {
  // The same images keep their buttons (a streaming neighbour re-sets them often).
  if (thumbnails.size() == thumbnails_.size() &&
      std::equal(thumbnails.begin(), thumbnails.end(), thumbnails_.begin(),
                 [](const QImage& a, const QImage& b) { return a.cacheKey() == b.cacheKey(); })) {
    return;
  }
  thumbnails_ = thumbnails;
  removeTilesBeforeStretch(row_);
  for (qsizetype i = 0; i < thumbnails_.size(); ++i) {
    const QImage shown = shrunkToFit(thumbnails_[i], kThumbnailSide);
    auto* button = new QToolButton(this);
    button->setObjectName(QStringLiteral("messageImage"));
    button->setAutoRaise(true);
    button->setCursor(Qt::PointingHandCursor);
    button->setIcon(QIcon(QPixmap::fromImage(shown)));
    button->setIconSize(shown.size());
    button->setToolTip(tr("Show the image at full size"));
    button->setAccessibleName(tr("Image %1 of %2").arg(i + 1).arg(thumbnails_.size()));
    const int index = static_cast<int>(i);
    connect(button, &QToolButton::clicked, this, [this, index] { emit openRequested(index); });
    row_->insertWidget(index, button);
  }
  setVisible(!thumbnails_.isEmpty());
}

}  // namespace quire::ui
