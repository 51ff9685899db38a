#include "quire/ui/attachment_strip.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QPixmap>
#include <QToolButton>
#include <QVBoxLayout>

#include "chat_style.h"
#include "image_tiles.h"

namespace quire::ui {

AttachmentStrip::AttachmentStrip(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("attachmentStrip"));
  auto* root = new QVBoxLayout(this);
  root->setContentsMargins(4, 0, 4, 4);
  root->setSpacing(4);
  row_ = new QHBoxLayout;
  row_->setContentsMargins(0, 0, 0, 0);
  row_->setSpacing(6);
  row_->addStretch(1);
  root->addLayout(row_);
  note_ = new QLabel(this);
  note_->setObjectName(QStringLiteral("attachmentNote"));
  note_->setWordWrap(true);
  useMutedText(note_);
  root->addWidget(note_);
  updateVisibility();
}

void AttachmentStrip::setImages(const QList<PendingImageView>& images) {
  images_ = images;
  rebuild();
  emit changed();
}

void AttachmentStrip::setNote(const QString& note) {
  note_->setText(note);
  updateVisibility();
}

QString AttachmentStrip::note() const {
  return note_->text();
}

void AttachmentStrip::rebuild() {
  removeTilesBeforeStretch(row_);
  for (qsizetype i = 0; i < images_.size(); ++i) {
    const PendingImageView& image = images_[i];
    auto* tile = new QWidget(this);
    tile->setObjectName(QStringLiteral("attachmentThumbnail"));
    tile->setToolTip(image.name);
    tile->setAccessibleName(tr("Attached image %1").arg(image.name));
    auto* layout = new QVBoxLayout(tile);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    auto* picture = new QLabel(tile);
    picture->setFixedSize(kThumbnailSide, kThumbnailSide);
    picture->setAlignment(Qt::AlignCenter);
    picture->setPixmap(QPixmap::fromImage(shrunkToFit(image.thumbnail, kThumbnailSide)));
    layout->addWidget(picture);
    auto* remove = new QToolButton(tile);
    remove->setObjectName(QStringLiteral("removeAttachment"));
    remove->setText(QStringLiteral("×"));
    remove->setAutoRaise(true);
    remove->setCursor(Qt::PointingHandCursor);
    remove->setToolTip(tr("Remove %1").arg(image.name));
    remove->setAccessibleName(tr("Remove %1").arg(image.name));
    const int index = static_cast<int>(i);
    connect(remove, &QToolButton::clicked, this, [this, index] { emit removeRequested(index); });
    layout->addWidget(remove, 0, Qt::AlignHCenter);
    row_->insertWidget(static_cast<int>(i), tile);
  }
  updateVisibility();
}

void AttachmentStrip::updateVisibility() {
  note_->setVisible(!images_.isEmpty() && !note_->text().isEmpty());
  setVisible(!images_.isEmpty());
}

}  // namespace quire::ui
