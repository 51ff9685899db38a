#include "quire/ui/page_map_layout.h"

#include <algorithm>

namespace quire::ui {
namespace {

qint64 ceilDiv(qint64 a, qint64 b) {
  return (a + b - 1) / b;
}

// Floor division that rounds towards minus infinity, for points left of or
// above the origin.
int floorDiv(int a, int b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

}  // namespace

int PageMapLayout::gapFor(int cell) {
  if (cell >= 8) return 2;
  if (cell >= 3) return 1;
  return 0;
}

PageMapLayout PageMapLayout::fit(int pages, const QRect& area, int max_cell) {
  PageMapLayout layout;
  layout.origin = area.topLeft();
  layout.pages = std::max(pages, 0);
  if (pages <= 0 || area.width() <= 0 || area.height() <= 0) return layout;

  for (int cell = std::max(max_cell, 1); cell >= 1; --cell) {
    if (area.width() < cell) continue;
    const int gap = gapFor(cell);
    const int pitch = cell + gap;
    const int columns = (area.width() + gap) / pitch;
    const qint64 rows = ceilDiv(pages, columns);
    if (rows * pitch - gap <= area.height()) {
      layout.cell = cell;
      layout.gap = gap;
      layout.columns = columns;
      layout.rows = static_cast<int>(rows);
      layout.cells = pages;
      return layout;
    }
  }

  // One pixel per page does not fit: each pixel stands for a run of pages.
  const qint64 capacity = qint64{area.width()} * area.height();
  layout.cell = 1;
  layout.gap = 0;
  layout.columns = area.width();
  layout.pages_per_cell = static_cast<int>(ceilDiv(pages, capacity));
  layout.cells = static_cast<int>(ceilDiv(pages, layout.pages_per_cell));
  layout.rows = static_cast<int>(ceilDiv(layout.cells, layout.columns));
  return layout;
}

QRect PageMapLayout::cellRect(int cell_index) const {
  if (cell_index < 0 || cell_index >= cells) return QRect();
  const int row = cell_index / columns;
  const int column = cell_index % columns;
  return QRect(origin.x() + column * pitch(), origin.y() + row * pitch(), cell, cell);
}

std::optional<int> PageMapLayout::cellAt(QPoint point) const {
  if (cells == 0) return std::nullopt;
  const int dx = point.x() - origin.x();
  const int dy = point.y() - origin.y();
  if (dx < 0 || dy < 0) return std::nullopt;
  const int column = dx / pitch();
  const int row = dy / pitch();
  if (column >= columns || row >= rows) return std::nullopt;
  if (dx % pitch() >= cell || dy % pitch() >= cell) return std::nullopt;  // in a gap
  const qint64 index = qint64{row} * columns + column;
  if (index >= cells) return std::nullopt;  // past the last cell of the last row
  return static_cast<int>(index);
}

QRect PageMapLayout::boundingRect() const {
  if (cells == 0) return QRect();
  const int used_columns = std::min(cells, columns);
  return QRect(origin.x(), origin.y(), used_columns * pitch() - gap, rows * pitch() - gap);
}

PageMapLayout::Span PageMapLayout::cellsMeeting(const QRect& rect) const {
  Span span;
  if (cells == 0 || rect.isEmpty()) return span;
  span.first_column = std::max(0, floorDiv(rect.left() - origin.x(), pitch()));
  span.last_column = std::min(columns - 1, floorDiv(rect.right() - origin.x(), pitch()));
  span.first_row = std::max(0, floorDiv(rect.top() - origin.y(), pitch()));
  span.last_row = std::min(rows - 1, floorDiv(rect.bottom() - origin.y(), pitch()));
  return span;
}

int PageMapLayout::pageCount(int cell_index) const {
  if (cell_index < 0 || cell_index >= cells) return 0;
  return std::min(pages_per_cell, pages - cell_index * pages_per_cell);
}

}  // namespace quire::ui
