#pragma once

// An image at full size, scaled down to fit the dialog (never up), which
// follows the window's size; Esc or Close closes it.
//
// Object names: "imageViewer", "imageViewerPicture".

#include <QDialog>
#include <QImage>

class QLabel;

namespace quire::ui {

class ImageViewer : public QDialog {
  Q_OBJECT

 public:
  ImageViewer(const QImage& image, const QString& title, QWidget* parent = nullptr);

  const QImage& image() const { return image_; }
  // What is drawn now: the image scaled to the space there is.
  QSize shownSize() const;

 protected:
  void resizeEvent(QResizeEvent* event) override;

 private:
  void fit();

  QImage image_;
  QLabel* picture_ = nullptr;
};

}  // namespace quire::ui
