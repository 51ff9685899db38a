#pragma once

// Keeps every tooltip of the application to a readable width. Qt shows a
// plain-text tooltip on one line as wide as its text (up to the screen's
// width), so a long explanation, a device's weight summary or a page's list
// of chats spans the screen. Installed on the application, this wraps any
// tooltip wider than about 70 characters at that width instead.

#include <QObject>

class QLabel;

namespace quire::gui {

class TooltipWidth : public QObject {
  Q_OBJECT

 public:
  // Filters the application's events for as long as this object (owned by
  // `owner`) lives.
  explicit TooltipWidth(QObject* owner);

  // The widest a tooltip may be for `label`'s font.
  static int maximumWidth(const QLabel& label);

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;
};

}  // namespace quire::gui
