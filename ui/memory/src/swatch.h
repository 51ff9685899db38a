#pragma once

// Painting shared by the cells of the page map, the segments of a device bar
// and their legends, so a swatch always looks like what it stands for.

#include <QColor>
#include <QList>
#include <QPalette>
#include <QRect>
#include <QString>

#include "quire/ui/memory_style.h"
#include "quire/ui/memory_view_data.h"

class QPainter;
class QFont;
class QFontMetrics;

namespace quire::ui::detail {

// Cells at least this large carry the shared-page dot; smaller ones are plain.
inline constexpr int kGlyphMinCell = 8;

// A page cell filled with `fill`; shared cells large enough get a dark centre
// dot, so they stay recognisable without relying on hue.
void paintPageCell(QPainter& painter, const QRect& rect, PageCellState state, const QColor& fill);

// A part of a device bar: its colour with its hatch on top.
void paintSegment(QPainter& painter, const QRect& rect, MemorySegment segment,
                  const QPalette& palette);

// One entry of a legend: a swatch, a label, a value in bold and an optional
// note in the secondary text colour.
struct LegendEntry {
  QString label;
  QString value;
  QString note;
};

// Entries laid out left to right, wrapping onto further lines when `width` is
// exhausted. Returns one rectangle per entry, relative to (0, 0).
QList<QRect> flowLegend(const QList<LegendEntry>& entries, const QFontMetrics& label_metrics,
                        const QFontMetrics& value_metrics, int width);
// Height of the flowed legend, 0 when it has no entries.
int legendHeight(const QList<QRect>& rects);

// `font` in bold: the weight of values in legends and of device names.
QFont boldFont(QFont font);

inline constexpr int kSwatchSize = 10;
inline constexpr int kSwatchGap = 5;  // between swatch and label
inline constexpr int kEntryGap = 16;  // between entries on a line
inline constexpr int kLineGap = 4;    // between wrapped lines

// Where the swatch of an entry laid out at `rect` goes.
QRect legendSwatchRect(const QRect& rect);
// Label and value of an entry laid out at `rect`, right of its swatch.
void paintLegendText(QPainter& painter, const QRect& rect, const LegendEntry& entry,
                     const QFont& label_font, const QFont& value_font, const QPalette& palette);

}  // namespace quire::ui::detail
