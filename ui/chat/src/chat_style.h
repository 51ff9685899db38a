#pragma once

#include <QColor>
#include <QFont>
#include <QFrame>

class QPalette;

namespace quire::ui {

// The look of the chat widgets. Every colour is derived from the widget's
// palette (Base mixed with another role, or with a fixed hue for a state such
// as an error), so light and dark themes both work and text keeps the
// palette's own Text colour.
enum class Tint { None, UserBubble, System, Code, CodeHeader, Error, Info, Input };

QColor mixColors(const QColor& from, const QColor& to, qreal amount);
bool isDarkPalette(const QPalette& palette);
QColor tintColor(Tint tint, const QPalette& palette);
QColor tintBorderColor(Tint tint, const QPalette& palette);

// Secondary text (captions, stats, times): the palette's PlaceholderText role.
void useMutedText(QWidget* widget);
// Text that reports a failure, in a red readable on the widget's background;
// `error` false gives the widget its parent's colours back.
void useErrorText(QWidget* widget, bool error = true);
// The system's monospace font, for code and JSON; never a proportional face.
QFont monospaceFont();
// The widget's font scaled by `factor` (captions, headings of the empty state).
void scaleFont(QWidget* widget, qreal factor, bool bold = false);

// A frame that paints a rounded, tinted background and border behind its
// children; the children stay transparent on it.
class TintedFrame : public QFrame {
 public:
  explicit TintedFrame(Tint tint, QWidget* parent = nullptr);

  Tint tint() const { return tint_; }
  void setTint(Tint tint);
  void setRadius(int radius);

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  Tint tint_;
  int radius_ = 10;
};

}  // namespace quire::ui
