#pragma once

// The images waiting to be sent with the next message: a row of thumbnails
// above the message box, each with a button that removes it, and a line
// under them for what the user should know (the model cannot see images).
// Hidden while there is nothing to show.
//
// Object names: "attachmentStrip", "attachmentThumbnail" (each), its
// "removeAttachment" button, "attachmentNote".

#include <QImage>
#include <QList>
#include <QString>
#include <QWidget>

class QHBoxLayout;
class QLabel;

namespace quire::ui {

struct PendingImageView {
  QImage thumbnail;
  QString name;  // the file name, for the tooltip and the remove button
};

class AttachmentStrip : public QWidget {
  Q_OBJECT

 public:
  static constexpr int kThumbnailSide = 64;

  explicit AttachmentStrip(QWidget* parent = nullptr);

  void setImages(const QList<PendingImageView>& images);
  int count() const { return static_cast<int>(images_.size()); }
  void setNote(const QString& note);
  QString note() const;

 signals:
  void removeRequested(int index);
  // setImages() changed what is shown.
  void changed();

 private:
  void rebuild();
  void updateVisibility();

  QList<PendingImageView> images_;
  QHBoxLayout* row_ = nullptr;
  QLabel* note_ = nullptr;
};

}  // namespace quire::ui
