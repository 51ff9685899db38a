#pragma once

// The images of a sent message, as thumbnails in its bubble; a click (or
// Enter on a focused one) asks for the full view.
//
// Object names: "messageImages", "messageImage" (each thumbnail button).

#include <QImage>
#include <QList>
#include <QWidget>

class QHBoxLayout;

namespace quire::ui {

class MessageImagesRow : public QWidget {
  Q_OBJECT

 public:
  static constexpr int kThumbnailSide = 120;

  explicit MessageImagesRow(QWidget* parent = nullptr);
  void setImages(const QList<QImage>& thumbnails);

 signals:
  void openRequested(int index);

 private:
  QList<QImage> thumbnails_;
  QHBoxLayout* row_ = nullptr;
};

}  // namespace quire::ui
