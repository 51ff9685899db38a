#pragma once

// The live map of the KV cache: one small square per page, coloured by state
// (free, in use, cached, shared), in rows that reflow with the width. Cells
// shrink with the page count down to one pixel; beyond that each pixel stands
// for a run of pages. Hovering or moving the keyboard focus over a cell tells
// what the page holds and which chats hold it.

#include <QImage>
#include <QList>
#include <QWidget>
#include <array>
#include <optional>
#include <vector>

#include "quire/ui/memory_view_data.h"
#include "quire/ui/page_map_layout.h"

namespace quire::ui {

class PageMapWidget : public QWidget {
  Q_OBJECT

 public:
  explicit PageMapWidget(QWidget* parent = nullptr);

  // Pages in page order. Repaints only the cells whose state changed.
  void setPages(const QList<PageCellView>& pages);
  const QList<PageCellView>& pages() const { return pages_; }

  // The current arrangement of cells inside the contents rectangle.
  const PageMapLayout& cellLayout() const { return cells().layout; }
  // The page under `point` (widget coordinates): its position in pages(), the
  // first page of the run when cells stand for several; nothing in the gaps
  // between cells, past the last one or outside.
  std::optional<int> cellAt(QPoint point) const;
  // The rectangle of the cell that shows page `page`.
  QRect pageRect(int page) const;
  // What the tooltip says for the cell that shows page `page`.
  QString toolTipForPage(int page) const;
  // The colour a cell in `state` is painted with under the current palette.
  QColor stateColor(PageCellState state) const;

  // Keyboard cursor (-1 when none); arrow keys, Home/End and Page Up/Down move
  // it, Enter or Space shows its tooltip.
  int currentPage() const { return current_; }
  void setCurrentPage(int page);
  // Page under the mouse, -1 when none.
  int hoveredPage() const { return hovered_; }

  QSize sizeHint() const override;
  QSize minimumSizeHint() const override;

 signals:
  void currentPageChanged(int page);
  void hoveredPageChanged(int page);

 protected:
  bool event(QEvent* event) override;
  void paintEvent(QPaintEvent* event) override;
  void changeEvent(QEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void leaveEvent(QEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;
  void focusInEvent(QFocusEvent* event) override;
  void focusOutEvent(QFocusEvent* event) override;

 private:
  // The cells as laid out for the current size and pages. Computed when first
  // asked for after a change, so geometry queries are right even before the
  // widget has been shown or received its resize event.
  struct Cells {
    QRect area;
    bool valid = false;
    PageMapLayout layout;
    // Drawn per cell: a PageCellState, or kPageCellStateCount for a page
    // restored from disk (PageCellView::from_disk).
    std::vector<quint8> states;
    // Cells of at most two pixels are drawn from this image, one pixel per
    // cell, scaled up without smoothing: far cheaper than a rectangle per page.
    QImage pixels;
  };
  const Cells& cells() const;
  QRect cellArea() const;
  // State drawn for each cell: the page's own (or restored from disk), or the
  // most frequent one of a run.
  std::vector<quint8> cellStates(const PageMapLayout& layout) const;
  void fillPixelImage(Cells& cells) const;
  void updateColours();
  void setHovered(int page);
  void updateCellOf(int page);          // schedule a repaint of that cell and its frame
  QRect framedRect(int page) const;     // what the hover and focus frames surround
  QRect highlightRect(int page) const;  // that plus the frames themselves
  void showToolTipFor(int page, const QPoint& global_pos);

  QList<PageCellView> pages_;
  mutable Cells cells_;
  // By drawn state: the page states', then that of pages restored from disk.
  std::array<QColor, kPageCellStateCount + 1> colours_;
  int current_ = -1;
  int hovered_ = -1;
};

}  // namespace quire::ui
