#include "swatch.h"

#include <QFont>
#include <QFontMetrics>
#include <QPainter>
#include <algorithm>

namespace quire::ui::detail {
namespace {

int entryWidth(const LegendEntry& entry, const QFontMetrics& label_metrics,
               const QFontMetrics& value_metrics) {
  int width = kSwatchSize + kSwatchGap + label_metrics.horizontalAdvance(entry.label);
  const int space = label_metrics.horizontalAdvance(u' ');
  if (!entry.value.isEmpty()) width += space + value_metrics.horizontalAdvance(entry.value);
  if (!entry.note.isEmpty()) width += space + label_metrics.horizontalAdvance(entry.note);
  return width;
}

}  // namespace

QFont boldFont(QFont font) {
  font.setBold(true);
  return font;
}

void paintPageCell(QPainter& painter, const QRect& rect, PageCellState state, const QColor& fill) {
  painter.fillRect(rect, fill);
  if (state != PageCellState::Shared || rect.width() < kGlyphMinCell) return;
  // The dot is a third of the cell, centred; darker than the fill so it reads
  // on the orange in both themes.
  const int dot = std::max(2, rect.width() / 3);
  const QRect centre(rect.x() + (rect.width() - dot) / 2, rect.y() + (rect.height() - dot) / 2, dot,
                     dot);
  painter.save();
  painter.setRenderHint(QPainter::Antialiasing, true);
  painter.setPen(Qt::NoPen);
  painter.setBrush(fill.darker(260));
  painter.drawEllipse(centre);
  painter.restore();
}

void paintSegment(QPainter& painter, const QRect& rect, MemorySegment segment,
                  const QPalette& palette) {
  if (rect.isEmpty()) return;
  painter.fillRect(rect, segmentColor(segment, palette));
  const Qt::BrushStyle pattern = segmentPattern(segment);
  if (pattern == Qt::NoBrush) return;
  // Anchor the hatch at the rectangle so it does not crawl when the bar's
  // segments move by a few pixels between snapshots.
  painter.save();
  painter.setBrushOrigin(rect.topLeft());
  painter.fillRect(rect, QBrush(segmentPatternColor(segment, palette), pattern));
  painter.restore();
}

QList<QRect> flowLegend(const QList<LegendEntry>& entries, const QFontMetrics& label_metrics,
                        const QFontMetrics& value_metrics, int width) {
  QList<QRect> rects;
  rects.reserve(entries.size());
  const int line_height = std::max({label_metrics.height(), value_metrics.height(), kSwatchSize});
  int x = 0;
  int y = 0;
  for (const LegendEntry& entry : entries) {
    const int w = entryWidth(entry, label_metrics, value_metrics);
    if (x > 0 && x + w > width) {  // wrap, but never leave a line empty
      x = 0;
      y += line_height + kLineGap;
    }
    rects << QRect(x, y, w, line_height);
    x += w + kEntryGap;
  }
  return rects;
}

int legendHeight(const QList<QRect>& rects) {
  int bottom = 0;
  for (const QRect& rect : rects)
    bottom = std::max(bottom, rect.y() + rect.height());
  return bottom;
}

QRect legendSwatchRect(const QRect& rect) {
  return QRect(rect.x(), rect.y() + (rect.height() - kSwatchSize) / 2, kSwatchSize, kSwatchSize);
}

void paintLegendText(QPainter& painter, const QRect& rect, const LegendEntry& entry,
                     const QFont& label_font, const QFont& value_font, const QPalette& palette) {
  painter.save();
  const QFontMetrics label_metrics(label_font);
  const QFontMetrics value_metrics(value_font);
  const int space = label_metrics.horizontalAdvance(u' ');
  int x = rect.x() + kSwatchSize + kSwatchGap;
  auto draw = [&](const QString& text, const QFont& font, const QFontMetrics& metrics,
                  const QColor& colour) {
    painter.setFont(font);
    painter.setPen(colour);
    const int width = metrics.horizontalAdvance(text);
    painter.drawText(QRect(x, rect.y(), width, rect.height()), Qt::AlignLeft | Qt::AlignVCenter,
                     text);
    x += width + space;
  };
  draw(entry.label, label_font, label_metrics, palette.color(QPalette::WindowText));
  if (!entry.value.isEmpty()) {
    draw(entry.value, value_font, value_metrics, palette.color(QPalette::WindowText));
  }
  if (!entry.note.isEmpty())
    draw(entry.note, label_font, label_metrics, secondaryTextColor(palette));
  painter.restore();
}

}  // namespace quire::ui::detail
