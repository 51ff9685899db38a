#pragma once

// Where the page map puts its cells: a grid of square cells filling rows from
// the left, the largest cell size that fits every page into the given area.
// When even one pixel per page is too much, each cell stands for a group of
// consecutive pages. Pure arithmetic, so hit-testing is tested exactly.

#include <QPoint>
#include <QRect>
#include <optional>

namespace quire::ui {

struct PageMapLayout {
  int cell = 0;  // edge of a cell in pixels; 0 when nothing can be drawn
  int gap = 0;   // pixels between neighbouring cells
  int columns = 0;
  int rows = 0;
  int pages = 0;           // pages laid out
  int pages_per_cell = 1;  // > 1 when cells stand for groups of pages
  int cells = 0;           // ceil(pages / pages_per_cell)
  QPoint origin;           // top-left corner of cell 0

  int pitch() const { return cell + gap; }
  bool isEmpty() const { return cells == 0; }

  // The largest cell (up to `max_cell`) that fits `pages` into `area`; gaps
  // shrink with the cells and vanish below 3 pixels, where they would cost
  // more room than the cells themselves.
  static PageMapLayout fit(int pages, const QRect& area, int max_cell = kDefaultMaxCell);
  static int gapFor(int cell);

  static constexpr int kDefaultMaxCell = 16;

  QRect cellRect(int cell_index) const;
  // The cell under `point`, or nothing in a gap, past the last cell or outside.
  std::optional<int> cellAt(QPoint point) const;
  // The rectangle covering every cell.
  QRect boundingRect() const;
  // Cells whose rectangles meet `rect`, as a first and last row and column.
  struct Span {
    int first_row = 0, last_row = -1, first_column = 0, last_column = -1;
  };
  Span cellsMeeting(const QRect& rect) const;

  int firstPage(int cell_index) const { return cell_index * pages_per_cell; }
  int pageCount(int cell_index) const;
  int cellOfPage(int page) const { return page / pages_per_cell; }

  friend bool operator==(const PageMapLayout&, const PageMapLayout&) = default;
};

}  // namespace quire::ui
