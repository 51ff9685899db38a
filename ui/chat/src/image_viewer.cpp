#include "quire/ui/image_viewer.h"

#include <QDialogButtonBox>
#include <QGuiApplication>
#include <QLabel>
#include <QPixmap>
#include <QPushButton>
#include <QScreen>
#include <QVBoxLayout>

namespace quire::ui {

ImageViewer::ImageViewer(const QImage& image, const QString& title, QWidget* parent)
    : QDialog(parent), image_(image) {
  setObjectName(QStringLiteral("imageViewer"));
  setWindowTitle(title);
  setAttribute(Qt::WA_DeleteOnClose);
  auto* layout = new QVBoxLayout(this);
  picture_ = new QLabel(this);
  picture_->setObjectName(QStringLiteral("imageViewerPicture"));
  picture_->setAlignment(Qt::AlignCenter);
  picture_->setMinimumSize(64, 64);
  picture_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Ignored);
  picture_->setAccessibleName(title);
  layout->addWidget(picture_, 1);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  layout->addWidget(buttons);
  // Opens at the image's size where the screen has room, else at most 80% of it.
  QSize wanted = image_.size() + QSize(24, 72);
  if (const QScreen* screen = QGuiApplication::primaryScreen()) {
    wanted = wanted.boundedTo(screen->availableSize() * 0.8);
  }
  resize(wanted.expandedTo(QSize(240, 200)));
  fit();
}

QSize ImageViewer::shownSize() const {
  return picture_->pixmap().size();
}

void ImageViewer::resizeEvent(QResizeEvent* event) {
  QDialog::resizeEvent(event);
  fit();
}

void ImageViewer::fit() {
  if (image_.isNull()) return;
  const QSize room = picture_->size();
  const QImage shown = image_.width() <= room.width() && image_.height() <= room.height()
                           ? image_
                           : image_.scaled(room, Qt::KeepAspectRatio, Qt::SmoothTransformation);
  picture_->setPixmap(QPixmap::fromImage(shown));
}

}  // namespace quire::ui
