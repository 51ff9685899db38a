#include "quire/ui/page_map_widget.h"

#include <QEvent>
#include <QHelpEvent>
#include <QPaintEvent>
#include <QPainter>
#include <QToolTip>
#include <algorithm>

#include "quire/ui/memory_style.h"
#include "quire/ui/memory_text.h"
#include "swatch.h"

namespace quire::ui {
namespace {

// Room around the cells for the hover and focus frames of edge cells.
constexpr int kFrameMargin = 3;
// Beyond this many changed cells one repaint of the whole map is cheaper than
// many small regions.
constexpr std::size_t kMaxPartialUpdates = 256;

// What a cell draws for a page restored from disk, after the page states.
constexpr quint8 kFromDiskCell = kPageCellStateCount;

// Tie-break for runs of pages: the rarer, more telling states win; pages
// restored from disk rank with the busy ones, so a resumed chat shows.
constexpr std::array<quint8, kPageCellStateCount + 1> kRunPriority{
    static_cast<quint8>(PageCellState::Shared), static_cast<quint8>(PageCellState::Active),
    kFromDiskCell, static_cast<quint8>(PageCellState::Cached),
    static_cast<quint8>(PageCellState::Free)};

quint8 drawnState(const PageCellView& page) {
  if (page.from_disk && page.state != PageCellState::Free) return kFromDiskCell;
  return static_cast<quint8>(page.state);
}

// A frame `thickness` pixels wide just outside `rect`.
void drawFrame(QPainter& painter, const QRect& rect, int thickness, const QColor& colour) {
  const QRect outer = rect.adjusted(-thickness, -thickness, thickness, thickness);
  painter.fillRect(QRect(outer.left(), outer.top(), outer.width(), thickness), colour);
  painter.fillRect(QRect(outer.left(), rect.bottom() + 1, outer.width(), thickness), colour);
  painter.fillRect(QRect(outer.left(), rect.top(), thickness, rect.height()), colour);
  painter.fillRect(QRect(rect.right() + 1, rect.top(), thickness, rect.height()), colour);
}

}  // namespace

PageMapWidget::PageMapWidget(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setFocusPolicy(Qt::StrongFocus);
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
  setAccessibleName(tr("KV cache page map"));
  updateColours();
}

void PageMapWidget::setPages(const QList<PageCellView>& pages) {
  if (pages == pages_) return;
  if (pages.size() != pages_.size()) {
    pages_ = pages;
    cells_.valid = false;
    const int last = static_cast<int>(pages_.size()) - 1;
    if (current_ > last) setCurrentPage(last);
    if (hovered_ > last) setHovered(-1);
    update();
    return;
  }

  // Same cells: repaint only those whose colour changed. Tokens, holders and
  // references change the tooltip, not the picture.
  cells();  // laid out for the old pages, to compare against
  pages_ = pages;
  std::vector<quint8> states = cellStates(cells_.layout);
  std::vector<int> changed;
  for (std::size_t cell = 0; cell < states.size(); ++cell) {
    if (states[cell] != cells_.states[cell]) changed.push_back(static_cast<int>(cell));
  }
  cells_.states = std::move(states);
  if (changed.empty()) return;
  const PageMapLayout& layout = cells_.layout;
  if (!cells_.pixels.isNull()) {
    for (int cell : changed) {
      cells_.pixels.setPixel(cell % layout.columns, cell / layout.columns,
                             colours_[cells_.states[static_cast<std::size_t>(cell)]].rgba());
    }
  }
  if (changed.size() > kMaxPartialUpdates) {
    update(layout.boundingRect());
    return;
  }
  for (int cell : changed)
    update(layout.cellRect(cell));
}

std::optional<int> PageMapWidget::cellAt(QPoint point) const {
  const PageMapLayout& layout = cellLayout();
  const std::optional<int> cell = layout.cellAt(point);
  if (!cell) return std::nullopt;
  return layout.firstPage(*cell);
}

QRect PageMapWidget::pageRect(int page) const {
  if (page < 0 || page >= pages_.size()) return QRect();
  const PageMapLayout& layout = cellLayout();
  return layout.cellRect(layout.cellOfPage(page));
}

QString PageMapWidget::toolTipForPage(int page) const {
  if (page < 0 || page >= pages_.size()) return QString();
  const PageMapLayout& layout = cellLayout();
  if (layout.pages_per_cell == 1) return pageToolTip(pages_[page]);
  const int cell = layout.cellOfPage(page);
  return pageGroupToolTip(pages_, layout.firstPage(cell), layout.pageCount(cell));
}

QColor PageMapWidget::stateColor(PageCellState state) const {
  return colours_[static_cast<std::size_t>(state)];
}

void PageMapWidget::setCurrentPage(int page) {
  if (pages_.isEmpty()) {
    page = -1;
  } else if (page >= 0) {
    // The cursor sits on the first page of a cell, so it moves cell by cell.
    const PageMapLayout& layout = cellLayout();
    page = layout.firstPage(layout.cellOfPage(std::min(page, int(pages_.size()) - 1)));
  }
  page = std::max(page, -1);
  if (page == current_) return;
  updateCellOf(current_);
  current_ = page;
  updateCellOf(current_);
  emit currentPageChanged(current_);
}

QSize PageMapWidget::sizeHint() const {
  return QSize(480, 200);
}

QSize PageMapWidget::minimumSizeHint() const {
  return QSize(120, 48);
}

QRect PageMapWidget::cellArea() const {
  return contentsRect().adjusted(kFrameMargin, kFrameMargin, -kFrameMargin, -kFrameMargin);
}

const PageMapWidget::Cells& PageMapWidget::cells() const {
  const QRect area = cellArea();
  if (cells_.valid && cells_.area == area) return cells_;
  cells_.area = area;
  cells_.layout = PageMapLayout::fit(static_cast<int>(pages_.size()), area);
  cells_.states = cellStates(cells_.layout);
  fillPixelImage(cells_);
  cells_.valid = true;
  return cells_;
}

void PageMapWidget::updateColours() {
  for (PageCellState state : kPageCellStates) {
    colours_[static_cast<std::size_t>(state)] = pageStateColor(state, palette());
  }
  colours_[kFromDiskCell] = fromDiskColor();
}

std::vector<quint8> PageMapWidget::cellStates(const PageMapLayout& layout) const {
  std::vector<quint8> states(static_cast<std::size_t>(layout.cells));
  if (layout.pages_per_cell == 1) {
    for (std::size_t i = 0; i < states.size(); ++i) {
      states[i] = drawnState(pages_[static_cast<qsizetype>(i)]);
    }
    return states;
  }
  for (int cell = 0; cell < layout.cells; ++cell) {
    std::array<int, kPageCellStateCount + 1> counts{};
    const int first = layout.firstPage(cell);
    for (int page = first; page < first + layout.pageCount(cell); ++page) {
      ++counts[drawnState(pages_[page])];
    }
    quint8 best = kRunPriority.front();
    for (const quint8 state : kRunPriority) {
      if (counts[state] > counts[best]) best = state;
    }
    states[static_cast<std::size_t>(cell)] = best;
  }
  return states;
}

void PageMapWidget::fillPixelImage(Cells& cells) const {
  const PageMapLayout& layout = cells.layout;
  if (layout.isEmpty() || layout.cell > 2) {
    cells.pixels = QImage();
    return;
  }
  cells.pixels = QImage(layout.columns, layout.rows, QImage::Format_ARGB32_Premultiplied);
  cells.pixels.fill(Qt::transparent);
  std::array<QRgb, kPageCellStateCount + 1> rgb{};
  for (std::size_t i = 0; i < rgb.size(); ++i)
    rgb[i] = colours_[i].rgba();
  for (int row = 0; row < layout.rows; ++row) {
    auto* line = reinterpret_cast<QRgb*>(cells.pixels.scanLine(row));
    const int first = row * layout.columns;
    const int end = std::min(first + layout.columns, layout.cells);
    for (int cell = first; cell < end; ++cell) {
      line[cell - first] = rgb[cells.states[static_cast<std::size_t>(cell)]];
    }
  }
}

QRect PageMapWidget::framedRect(int page) const {
  const QRect cell = pageRect(page);
  if (cell.isNull()) return QRect();
  // Tiny cells get their frame around a 3x3 neighbourhood so it can be seen.
  return cell.width() < 3 ? QRect(cell.center() - QPoint(1, 1), QSize(3, 3)) : cell;
}

QRect PageMapWidget::highlightRect(int page) const {
  const QRect framed = framedRect(page);
  return framed.isNull() ? QRect() : framed.adjusted(-2, -2, 2, 2);
}

void PageMapWidget::updateCellOf(int page) {
  const QRect rect = highlightRect(page);
  if (!rect.isNull()) update(rect);
}

void PageMapWidget::setHovered(int page) {
  if (page == hovered_) return;
  updateCellOf(hovered_);
  hovered_ = page;
  updateCellOf(hovered_);
  emit hoveredPageChanged(hovered_);
}

void PageMapWidget::showToolTipFor(int page, const QPoint& global_pos) {
  QToolTip::showText(global_pos, toolTipForPage(page), this, pageRect(page));
}

bool PageMapWidget::event(QEvent* event) {
  if (event->type() == QEvent::ToolTip) {
    const auto* help = static_cast<QHelpEvent*>(event);
    if (const std::optional<int> page = cellAt(help->pos())) {
      showToolTipFor(*page, help->globalPos());
    } else {
      QToolTip::hideText();
      event->ignore();
    }
    return true;
  }
  return QWidget::event(event);
}

void PageMapWidget::paintEvent(QPaintEvent* event) {
  const Cells& drawn = cells();
  const PageMapLayout& layout = drawn.layout;
  if (layout.isEmpty()) return;
  QPainter painter(this);
  // Only the cells meeting the exposed rectangle are drawn: a state change
  // repaints a handful of cells, not the whole map.
  const PageMapLayout::Span span = layout.cellsMeeting(event->rect());

  if (!drawn.pixels.isNull()) {
    // No gaps at this size: the exposed cells are one block of the image,
    // scaled up by the cell size.
    if (span.last_row >= span.first_row && span.last_column >= span.first_column) {
      const QRect source(span.first_column, span.first_row,
                         span.last_column - span.first_column + 1,
                         span.last_row - span.first_row + 1);
      const QRect target(layout.origin + source.topLeft() * layout.cell,
                         source.size() * layout.cell);
      painter.drawImage(target, drawn.pixels, source);
    }
  } else {
    for (int row = span.first_row; row <= span.last_row; ++row) {
      for (int column = span.first_column; column <= span.last_column; ++column) {
        const int cell = row * layout.columns + column;
        if (cell >= layout.cells) break;
        const quint8 state = drawn.states[static_cast<std::size_t>(cell)];
        if (state == kFromDiskCell) {
          painter.fillRect(layout.cellRect(cell), colours_[kFromDiskCell]);
          continue;
        }
        detail::paintPageCell(painter, layout.cellRect(cell), static_cast<PageCellState>(state),
                              colours_[state]);
      }
    }
  }

  if (hovered_ >= 0 && hovered_ != current_) {
    drawFrame(painter, framedRect(hovered_), 1, palette().color(QPalette::WindowText));
  }
  if (current_ >= 0) {
    // The cursor is loud while the map has focus and quiet otherwise.
    if (hasFocus()) {
      drawFrame(painter, framedRect(current_), 2, palette().color(QPalette::Highlight));
    } else {
      drawFrame(painter, framedRect(current_), 1, outlineColor(palette()));
    }
  }
}

void PageMapWidget::changeEvent(QEvent* event) {
  if (event->type() == QEvent::PaletteChange) {
    updateColours();
    cells_.valid = false;
    update();
  } else if (event->type() == QEvent::ContentsRectChange) {
    update();
  }
  QWidget::changeEvent(event);
}

}  // namespace quire::ui
