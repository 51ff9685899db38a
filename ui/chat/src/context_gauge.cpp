#include "context_gauge.h"

#include <QLocale>
#include <QPainter>
#include <algorithm>

#include "chat_style.h"

namespace quire::ui {
namespace {

constexpr int kBarWidth = 72;
constexpr int kBarHeight = 6;
constexpr int kGap = 6;
// State hues, readable on light and dark windows; text never uses them.
const QColor kAmber(0xe0, 0x9b, 0x12);
const QColor kRed(0xd9, 0x30, 0x25);

}  // namespace

ContextGauge::ContextGauge(QWidget* parent) : QWidget(parent) {
  setSizePolicy(QSizePolicy::Fixed, QSizePolicy::Preferred);
}

void ContextGauge::setFill(qint64 used, qint64 maximum, double warningShare, double criticalShare) {
  used_ = std::max<qint64>(0, used);
  maximum_ = std::max<qint64>(0, maximum);
  warning_ = warningShare;
  critical_ = criticalShare;
  const QLocale locale;
  text_ = tr("%1 / %2").arg(locale.toString(used_), locale.toString(maximum_));
  setAccessibleDescription(tr("%1 of %2 tokens of the context used (%3%)")
                               .arg(locale.toString(used_), locale.toString(maximum_))
                               .arg(qRound(fraction() * 100)));
  updateGeometry();
  update();
}

void ContextGauge::setDropped(qint64 from, qint64 to) {
  droppedFrom_ = std::clamp<qint64>(from, 0, used_);
  droppedTo_ = std::clamp<qint64>(to, droppedFrom_, used_);
  update();
}

double ContextGauge::fraction() const {
  if (maximum_ <= 0) return 0.0;
  return std::clamp(static_cast<double>(used_) / static_cast<double>(maximum_), 0.0, 1.0);
}

QColor ContextGauge::barColor() const {
  const double share = fraction();
  if (share >= critical_) return kRed;
  if (share >= warning_) return kAmber;
  return palette().color(QPalette::Highlight);
}

QSize ContextGauge::sizeHint() const {
  const QFontMetrics metrics = fontMetrics();
  return {kBarWidth + kGap + metrics.horizontalAdvance(text_) + 2, metrics.height()};
}

void ContextGauge::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.setRenderHint(QPainter::Antialiasing);
  const QRectF track(0.5, (height() - kBarHeight) / 2.0, kBarWidth - 1, kBarHeight);
  const QColor window = palette().color(QPalette::Window);
  painter.setPen(Qt::NoPen);
  painter.setBrush(mixColors(window, palette().color(QPalette::WindowText), 0.15));
  painter.drawRoundedRect(track, kBarHeight / 2.0, kBarHeight / 2.0);
  const double share = fraction();
  if (share > 0) {
    QRectF filled = track;
    filled.setWidth(std::max(static_cast<double>(kBarHeight), track.width() * share));
    painter.setBrush(barColor());
    painter.drawRoundedRect(filled, kBarHeight / 2.0, kBarHeight / 2.0);
  }
  if (droppedTo_ > droppedFrom_ && maximum_ > 0) {
    // What the next turn drops: the window's colour with diagonal lines over
    // the fill, so the section reads as "going" in any palette.
    const double scale = track.width() / static_cast<double>(maximum_);
    QRectF section = track;
    section.setLeft(track.left() + scale * static_cast<double>(droppedFrom_));
    section.setRight(
        std::min(track.right(), track.left() + scale * static_cast<double>(droppedTo_)));
    painter.setBrush(window);
    painter.drawRect(section);
    painter.setBrush(QBrush(barColor(), Qt::BDiagPattern));
    painter.drawRect(section);
  }
  painter.setPen(palette().color(QPalette::WindowText));
  painter.drawText(QRect(kBarWidth + kGap, 0, width() - kBarWidth - kGap, height()),
                   Qt::AlignLeft | Qt::AlignVCenter, text_);
}

}  // namespace quire::ui
