#pragma once

// Files dragged onto a widget: the main window takes chat exports dropped
// anywhere on it (the chat list included; the message box keeps text drops
// for itself) and hands their paths on.

#include <QObject>
#include <QStringList>

class QMimeData;
class QWidget;

namespace quire::gui {

class FileDropTarget : public QObject {
  Q_OBJECT

 public:
  // Makes `target` accept drops of local files; owned by `target`.
  explicit FileDropTarget(QWidget* target);

  // The local files among dropped URLs, in order; empty when there are none.
  static QStringList localFiles(const QMimeData* data);

 signals:
  void filesDropped(const QStringList& paths);

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;
};

}  // namespace quire::gui
