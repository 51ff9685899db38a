#include "chat_style.h"

#include <QFontDatabase>
#include <QFontInfo>
#include <QPainter>
#include <QPalette>

namespace quire::ui {
namespace {

// A red that reads as "error" on both light and dark backgrounds once mixed
// into Base; the text drawn over it keeps the palette's Text colour.
const QColor kErrorHue(0xd9, 0x30, 0x25);

}  // namespace

QColor mixColors(const QColor& from, const QColor& to, qreal amount) {
  const QColor a = from.toRgb();
  const QColor b = to.toRgb();
  const auto t = static_cast<float>(amount);
  auto lerp = [t](float x, float y) { return x + (y - x) * t; };
  return QColor::fromRgbF(lerp(a.redF(), b.redF()), lerp(a.greenF(), b.greenF()),
                          lerp(a.blueF(), b.blueF()), lerp(a.alphaF(), b.alphaF()));
}

bool isDarkPalette(const QPalette& palette) {
  return palette.color(QPalette::Base).lightnessF() < 0.5;
}

QColor tintColor(Tint tint, const QPalette& palette) {
  const QColor base = palette.color(QPalette::Base);
  const QColor text = palette.color(QPalette::Text);
  // Dark themes need a stronger mix for the same perceived contrast.
  const qreal k = isDarkPalette(palette) ? 1.6 : 1.0;
  switch (tint) {
    case Tint::None:
      return Qt::transparent;
    case Tint::UserBubble:
      return mixColors(base, palette.color(QPalette::Highlight), 0.13 * k);
    case Tint::System:
      return mixColors(base, text, 0.04 * k);
    case Tint::Code:
      return mixColors(base, text, 0.055 * k);
    case Tint::CodeHeader:
      return mixColors(base, text, 0.10 * k);
    case Tint::Error:
      return mixColors(base, kErrorHue, 0.12 * k);
    case Tint::Info:
      return mixColors(base, palette.color(QPalette::Highlight), 0.08 * k);
    case Tint::Input:
      return base;
  }
  return base;
}

QColor tintBorderColor(Tint tint, const QPalette& palette) {
  const QColor base = palette.color(QPalette::Base);
  const qreal k = isDarkPalette(palette) ? 1.4 : 1.0;
  switch (tint) {
    case Tint::None:
      return Qt::transparent;
    case Tint::Error:
      return mixColors(base, kErrorHue, 0.45 * k);
    case Tint::UserBubble:
      return mixColors(base, palette.color(QPalette::Highlight), 0.22 * k);
    case Tint::Info:
      return mixColors(base, palette.color(QPalette::Highlight), 0.30 * k);
    case Tint::Input:
      return mixColors(base, palette.color(QPalette::Text), 0.22 * k);
    default:
      return mixColors(base, palette.color(QPalette::Text), 0.12 * k);
  }
}

void useMutedText(QWidget* widget) {
  widget->setForegroundRole(QPalette::PlaceholderText);
}

void useErrorText(QWidget* widget, bool error) {
  if (!error) {
    // An empty palette resolves nothing of its own: the parent's shows through.
    widget->setPalette(QPalette());
    return;
  }
  QPalette palette = widget->palette();
  // Mixed towards the text colour so that it keeps its contrast in dark themes.
  const QColor red = mixColors(kErrorHue, palette.color(QPalette::WindowText),
                               isDarkPalette(palette) ? 0.25 : 0.1);
  palette.setColor(QPalette::WindowText, red);
  palette.setColor(QPalette::Text, red);
  widget->setPalette(palette);
}

QFont monospaceFont() {
  QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
  if (!QFontInfo(mono).fixedPitch()) {
    // Some font setups answer the fixed-font query with a proportional face;
    // code must still line up.
    mono.setFamilies({QStringLiteral("DejaVu Sans Mono"), QStringLiteral("Liberation Mono"),
                      QStringLiteral("monospace")});
    mono.setStyleHint(QFont::TypeWriter);
    mono.setFixedPitch(true);
  }
  return mono;
}

void scaleFont(QWidget* widget, qreal factor, bool bold) {
  QFont font = widget->font();
  if (font.pointSizeF() > 0)
    font.setPointSizeF(font.pointSizeF() * factor);
  else
    font.setPixelSize(qRound(font.pixelSize() * factor));
  if (bold) font.setWeight(QFont::DemiBold);
  widget->setFont(font);
}

TintedFrame::TintedFrame(Tint tint, QWidget* parent) : QFrame(parent), tint_(tint) {
  setFrameShape(QFrame::NoFrame);
}

void TintedFrame::setTint(Tint tint) {
  if (tint_ == tint) return;
  tint_ = tint;
  update();
}

void TintedFrame::setRadius(int radius) {
  radius_ = radius;
  update();
}

void TintedFrame::paintEvent(QPaintEvent* event) {
  if (tint_ != Tint::None) {
    QPainter painter(this);
    painter.setRenderHint(QPainter::Antialiasing);
    painter.setPen(QPen(tintBorderColor(tint_, palette()), 1.0));
    painter.setBrush(tintColor(tint_, palette()));
    painter.drawRoundedRect(QRectF(rect()).adjusted(0.5, 0.5, -0.5, -0.5), radius_, radius_);
  }
  QFrame::paintEvent(event);
}

}  // namespace quire::ui
