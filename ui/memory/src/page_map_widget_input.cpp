// Mouse, keyboard and focus handling of the page map: hover, the keyboard
// cursor and its moves over the grid.

#include <QFocusEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <algorithm>

#include "quire/ui/page_map_widget.h"

namespace quire::ui {
namespace {

// Rows moved by Page Up / Page Down.
constexpr int kPageStepRows = 10;

}  // namespace

void PageMapWidget::mouseMoveEvent(QMouseEvent* event) {
  setHovered(cellAt(event->position().toPoint()).value_or(-1));
  QWidget::mouseMoveEvent(event);
}

void PageMapWidget::mousePressEvent(QMouseEvent* event) {
  if (const std::optional<int> page = cellAt(event->position().toPoint())) {
    setCurrentPage(*page);
    event->accept();
    return;
  }
  QWidget::mousePressEvent(event);
}

void PageMapWidget::leaveEvent(QEvent* event) {
  setHovered(-1);
  QWidget::leaveEvent(event);
}

void PageMapWidget::keyPressEvent(QKeyEvent* event) {
  const PageMapLayout& layout = cellLayout();
  if (pages_.isEmpty() || layout.isEmpty()) {
    QWidget::keyPressEvent(event);
    return;
  }
  const int last = static_cast<int>(pages_.size()) - 1;
  const int from = std::max(current_, 0);
  const int step = layout.pages_per_cell;
  const int row = layout.columns * step;
  int to = from;
  switch (event->key()) {
    case Qt::Key_Left:
      to = from - step;
      break;
    case Qt::Key_Right:
      to = from + step;
      break;
    case Qt::Key_Up:
      to = from - row;
      break;
    case Qt::Key_Down:
      to = from + row;
      break;
    case Qt::Key_PageUp:
      to = from - kPageStepRows * row;
      break;
    case Qt::Key_PageDown:
      to = from + kPageStepRows * row;
      break;
    case Qt::Key_Home:
      to = 0;
      break;
    case Qt::Key_End:
      to = last;
      break;
    case Qt::Key_Return:
    case Qt::Key_Enter:
    case Qt::Key_Space:
      if (current_ >= 0) showToolTipFor(current_, mapToGlobal(pageRect(current_).center()));
      event->accept();
      return;
    default:
      QWidget::keyPressEvent(event);
      return;
  }
  if (current_ < 0 && event->key() != Qt::Key_End) {
    to = 0;  // the first key press puts the cursor on the map
  } else if (to < 0 || to > last) {
    // Moving up from the first row or down from the last stays put rather
    // than jumping to the ends, as in a grid of icons.
    if (event->key() == Qt::Key_Left || event->key() == Qt::Key_Right ||
        event->key() == Qt::Key_PageUp || event->key() == Qt::Key_PageDown) {
      to = std::clamp(to, 0, last);
    } else {
      to = from;
    }
  }
  setCurrentPage(to);
  event->accept();
}

void PageMapWidget::focusInEvent(QFocusEvent* event) {
  // Arriving by keyboard puts the cursor on the first page; a click sets it
  // to the clicked page itself.
  const bool by_keyboard = event->reason() == Qt::TabFocusReason ||
                           event->reason() == Qt::BacktabFocusReason ||
                           event->reason() == Qt::ShortcutFocusReason;
  if (current_ < 0 && by_keyboard) setCurrentPage(0);
  updateCellOf(current_);
  QWidget::focusInEvent(event);
}

void PageMapWidget::focusOutEvent(QFocusEvent* event) {
  updateCellOf(current_);
  QWidget::focusOutEvent(event);
}

}  // namespace quire::ui
