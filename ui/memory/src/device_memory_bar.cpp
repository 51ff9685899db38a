#include "quire/ui/device_memory_bar.h"

#include <QEvent>
#include <QFontMetrics>
#include <QHelpEvent>
#include <QPainter>
#include <QPainterPath>
#include <QToolTip>
#include <algorithm>

#include "quire/ui/memory_text.h"
#include "swatch.h"

namespace quire::ui {
namespace {

constexpr int kHeaderGap = 4;  // between the header line and the bar
constexpr int kLegendGap = 6;  // between the bar and its legend
constexpr int kRadius = 4;

// The parts the legend lists, in order: every part, zero or not, so the
// legend does not jump about as a job starts or ends (host memory's own parts
// on host memory only).
QList<MemorySegment> legendSegments(const DeviceMemoryView& device) {
  QList<MemorySegment> segments;
  for (MemorySegment segment : kMemorySegments) {
    if (segmentListed(device, segment)) segments.append(segment);
  }
  return segments;
}

QList<detail::LegendEntry> legendEntries(const DeviceMemoryView& device) {
  QList<detail::LegendEntry> entries;
  for (MemorySegment segment : legendSegments(device)) {
    entries.push_back(
        {segmentLabel(segment), formatBytes(segmentBytes(device, segment)), QString()});
  }
  return entries;
}

}  // namespace

DeviceMemoryBar::DeviceMemoryBar(QWidget* parent) : QWidget(parent) {
  QSizePolicy policy(QSizePolicy::Expanding, QSizePolicy::Fixed);
  policy.setHeightForWidth(true);
  setSizePolicy(policy);
  setAccessibleName(tr("Device memory"));
}

void DeviceMemoryBar::setDevice(const DeviceMemoryView& device) {
  if (device == device_) return;  // snapshots arrive often; most change nothing here
  device_ = device;
  setAccessibleName(device_.name);
  setAccessibleDescription(toolTipText());
  // A new size text can make the legend wrap differently; only then does the
  // surrounding layout need to hear about it.
  const int height = heightForWidth(width());
  if (height != laid_out_height_) {
    laid_out_height_ = height;
    updateGeometry();
  }
  update();
}

QString DeviceMemoryBar::toolTipText() const {
  return deviceToolTip(device_);
}

DeviceMemoryBar::Geometry DeviceMemoryBar::geometryFor(int width) const {
  const QFontMetrics label_metrics(font());
  const QFontMetrics bold_metrics(detail::boldFont(font()));
  Geometry geometry;
  geometry.header = QRect(0, 0, width, std::max(label_metrics.height(), bold_metrics.height()));
  geometry.bar = QRect(0, geometry.header.bottom() + 1 + kHeaderGap, width, kBarHeight);
  geometry.legend = detail::flowLegend(legendEntries(device_), label_metrics, bold_metrics, width);
  const int legend_top = geometry.bar.bottom() + 1 + kLegendGap;
  for (QRect& rect : geometry.legend)
    rect.translate(0, legend_top);
  // The legend rectangles are already moved below the bar, so their bottom is
  // the widget's height.
  geometry.height = detail::legendHeight(geometry.legend);
  return geometry;
}

int DeviceMemoryBar::heightForWidth(int width) const {
  return geometryFor(width).height;
}

QSize DeviceMemoryBar::sizeHint() const {
  constexpr int kPreferredWidth = 420;
  return QSize(kPreferredWidth, heightForWidth(kPreferredWidth));
}

QSize DeviceMemoryBar::minimumSizeHint() const {
  constexpr int kMinimumWidth = 200;
  return QSize(kMinimumWidth, heightForWidth(kMinimumWidth));
}

QRect DeviceMemoryBar::barRect() const {
  return geometryFor(width()).bar;
}

std::array<QRect, kMemorySegmentCount> DeviceMemoryBar::segmentRects(const QRect& bar) const {
  std::array<QRect, kMemorySegmentCount> rects{};
  qint64 sum = 0;
  for (MemorySegment segment : kMemorySegments)
    sum += std::max<qint64>(0, segmentBytes(device_, segment));
  // The bar spans the device's total, or more when the parts add up to more
  // (stale numbers from different moments); never less, so parts are not cut.
  const qint64 scale = std::max(device_.total, sum);
  if (scale <= 0 || bar.width() <= 0) return rects;
  // Edges are rounded from running sums, so the parts tile the bar exactly.
  auto edge = [&](qint64 bytes) {
    return bar.left() + static_cast<int>((bytes * bar.width() + scale / 2) / scale);
  };
  qint64 running = 0;
  for (std::size_t i = 0; i < kMemorySegments.size(); ++i) {
    const qint64 bytes = std::max<qint64>(0, segmentBytes(device_, kMemorySegments[i]));
    const int left = edge(running);
    running += bytes;
    const int right = edge(running);
    if (bytes > 0 && right > left) rects[i] = QRect(left, bar.top(), right - left, bar.height());
  }
  return rects;
}

QRect DeviceMemoryBar::segmentRect(MemorySegment segment) const {
  return segmentRects(barRect())[static_cast<std::size_t>(segment)];
}

std::optional<MemorySegment> DeviceMemoryBar::segmentAt(QPoint point) const {
  const auto rects = segmentRects(barRect());
  for (std::size_t i = 0; i < rects.size(); ++i) {
    if (rects[i].contains(point)) return kMemorySegments[i];
  }
  return std::nullopt;
}

bool DeviceMemoryBar::event(QEvent* event) {
  if (event->type() == QEvent::ToolTip) {
    const auto* help = static_cast<QHelpEvent*>(event);
    QToolTip::showText(help->globalPos(), toolTipText(), this, rect());
    return true;
  }
  return QWidget::event(event);
}

void DeviceMemoryBar::changeEvent(QEvent* event) {
  if (event->type() == QEvent::FontChange) {
    laid_out_height_ = -1;
    updateGeometry();
  }
  if (event->type() == QEvent::FontChange || event->type() == QEvent::PaletteChange) update();
  QWidget::changeEvent(event);
}

void DeviceMemoryBar::paintEvent(QPaintEvent* /*event*/) {
  const Geometry geometry = geometryFor(width());
  const QPalette& pal = palette();
  const QFont bold = detail::boldFont(font());
  QPainter painter(this);

  // Header: name on the left, usage on the right; the name gives way.
  const QString usage = deviceUsageText(device_);
  const QFontMetrics label_metrics(font());
  const int usage_width = label_metrics.horizontalAdvance(usage);
  painter.setPen(secondaryTextColor(pal));
  painter.drawText(geometry.header, Qt::AlignRight | Qt::AlignVCenter, usage);
  painter.setFont(bold);
  painter.setPen(pal.color(QPalette::WindowText));
  const int name_width = std::max(0, geometry.header.width() - usage_width - 12);
  const QString name = QFontMetrics(bold).elidedText(device_.name, Qt::ElideRight, name_width);
  painter.drawText(geometry.header.adjusted(0, 0, -(usage_width + 12), 0),
                   Qt::AlignLeft | Qt::AlignVCenter, name);
  painter.setFont(font());

  // The bar: a rounded track with the parts on top, separated by thin lines
  // of the window colour so neighbours stay apart without relying on hue.
  const QRect bar = geometry.bar;
  QPainterPath outline;
  outline.addRoundedRect(QRectF(bar).adjusted(0.5, 0.5, -0.5, -0.5), kRadius, kRadius);
  painter.save();
  painter.setRenderHint(QPainter::Antialiasing, true);
  painter.setClipPath(outline);
  painter.fillRect(bar, trackColor(pal));
  const auto rects = segmentRects(bar);
  for (std::size_t i = 0; i < rects.size(); ++i) {
    detail::paintSegment(painter, rects[i], kMemorySegments[i], pal);
  }
  painter.setRenderHint(QPainter::Antialiasing, false);
  painter.setPen(pal.color(QPalette::Window));
  for (std::size_t i = 1; i < rects.size(); ++i) {
    if (!rects[i].isEmpty() && rects[i].left() > bar.left()) {
      painter.drawLine(rects[i].left(), bar.top(), rects[i].left(), bar.bottom());
    }
  }
  painter.restore();
  painter.save();
  painter.setRenderHint(QPainter::Antialiasing, true);
  painter.setPen(QPen(outlineColor(pal), 1.0));
  painter.setBrush(Qt::NoBrush);
  painter.drawPath(outline);
  painter.restore();

  // Legend with sizes.
  const QList<detail::LegendEntry> entries = legendEntries(device_);
  const QList<MemorySegment> segments = legendSegments(device_);
  for (qsizetype i = 0; i < entries.size() && i < geometry.legend.size(); ++i) {
    const QRect swatch = detail::legendSwatchRect(geometry.legend[i]);
    detail::paintSegment(painter, swatch, segments.at(i), pal);
    painter.setPen(outlineColor(pal));
    painter.drawRect(swatch.adjusted(0, 0, -1, -1));
    detail::paintLegendText(painter, geometry.legend[i], entries[i], font(), bold, pal);
  }
}

}  // namespace quire::ui
