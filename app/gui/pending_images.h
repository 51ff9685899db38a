#pragma once

// The images attached to the message being written: taken in from the attach
// button's file dialog, drops and pastes (probed first: what cannot be
// attached is said, naming the file), shown in the message box's strip with
// the note that the loaded model cannot see them, and handed to the message
// when it is sent.

#include <QList>
#include <QObject>
#include <QStringList>

#include "quire/app/attachments/image_probe.h"
#include "quire/app/store/chat_types.h"
#include "quire/ui/offered_images.h"

namespace quire::ui {
class InputBox;
}

namespace quire::gui {

class EngineHost;

class PendingImages : public QObject {
  Q_OBJECT

 public:
  PendingImages(ui::InputBox& input, EngineHost& host, QObject* parent = nullptr);

  // Probes and attaches each; the refused ones are reported through problem().
  void offer(const QList<ui::OfferedImage>& images);
  void attachFiles(const QStringList& paths);
  void remove(int index);
  QList<store::ChatImage> images() const { return images_; }
  // The images for the message being sent; none are pending afterwards.
  QList<store::ChatImage> take();
  // The strip's note follows the model (loaded, unloaded, switched).
  void refresh();
  void setLimits(const attachments::AttachLimits& limits) { limits_ = limits; }

  // The attach dialog's filter: the formats a chat takes.
  static QString fileFilter();

 signals:
  void problem(const QString& text);

 private:
  ui::InputBox& input_;
  EngineHost& host_;
  attachments::AttachLimits limits_;
  QList<store::ChatImage> images_;
  QStringList names_;
};

}  // namespace quire::gui
