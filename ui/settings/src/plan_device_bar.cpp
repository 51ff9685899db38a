#include "plan_device_bar.h"

#include <QPainter>
#include <QPainterPath>
#include <algorithm>
#include <array>

namespace quire::ui {

namespace plan_colors {
QColor weights() {
  return {0x4e, 0x79, 0xa7};
}
QColor cache() {
  return {0xb0, 0x7a, 0xa1};
}
QColor scratch() {
  return {0xf2, 0x8e, 0x2b};
}
QColor reserve() {
  return {0x9d, 0x9d, 0x9d};
}
QColor free() {
  return {0xcf, 0xe8, 0xc9};
}
QColor overflow() {
  return {0xd6, 0x27, 0x28};
}
}  // namespace plan_colors

PlanDeviceBar::PlanDeviceBar(QWidget* parent) : QWidget(parent) {
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
}

void PlanDeviceBar::setDevice(const PlanDeviceView& device) {
  device_ = device;
  update();
}

QSize PlanDeviceBar::sizeHint() const {
  return {240, 16};
}
QSize PlanDeviceBar::minimumSizeHint() const {
  return {80, 16};
}

void PlanDeviceBar::paintEvent(QPaintEvent* /*event*/) {
  QPainter painter(this);
  painter.setRenderHint(QPainter::Antialiasing);
  const QRectF frame = QRectF(rect()).adjusted(0.5, 0.5, -0.5, -0.5);
  QPainterPath clip;
  clip.addRoundedRect(frame, 3, 3);
  painter.setClipPath(clip);
  painter.fillRect(frame, palette().color(QPalette::Base));

  const PlanDeviceView& d = device_;
  const qint64 planned = d.used ? d.weights + d.cache + d.scratch : 0;
  const qint64 reserve = d.used ? d.reserve : 0;
  // Scale to whichever is larger, the device's free memory or what the plan
  // asks of it, so an overflow shows as a red tail past the device's end.
  const qint64 total = std::max<qint64>({d.free_before, planned + reserve, 1});
  const double width = frame.width();
  auto x_of = [&](qint64 bytes) {
    return frame.left() + width * static_cast<double>(bytes) / static_cast<double>(total);
  };

  struct Segment {
    qint64 bytes;
    QColor color;
  };
  const std::array<Segment, 5> segments = {{
      {d.used ? d.weights : 0, plan_colors::weights()},
      {d.used ? d.cache : 0, plan_colors::cache()},
      {d.used ? d.scratch : 0, plan_colors::scratch()},
      {reserve, plan_colors::reserve()},
      {std::max<qint64>(0, d.free_before - planned - reserve), plan_colors::free()},
  }};
  qint64 start = 0;
  for (const Segment& segment : segments) {
    if (segment.bytes <= 0) continue;
    const QRectF box(QPointF(x_of(start), frame.top()),
                     QPointF(x_of(start + segment.bytes), frame.bottom()));
    painter.fillRect(box, segment.color);
    start += segment.bytes;
  }
  if (planned + reserve > d.free_before) {
    const QRectF over(QPointF(x_of(std::max<qint64>(d.free_before, 0)), frame.top()),
                      QPointF(x_of(planned + reserve), frame.bottom()));
    painter.fillRect(over, QBrush(plan_colors::overflow(), Qt::BDiagPattern));
    painter.setPen(QPen(plan_colors::overflow(), 2));
    painter.drawLine(over.topLeft(), over.bottomLeft());
  }
  painter.setClipping(false);
  painter.setPen(palette().color(QPalette::Mid));
  painter.setBrush(Qt::NoBrush);
  painter.drawRoundedRect(frame, 3, 3);
}

}  // namespace quire::ui
