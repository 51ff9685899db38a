#pragma once

// Data and probes shared by the memory panel's tests.

#include <QEvent>
#include <QImage>
#include <QList>
#include <QObject>
#include <QRect>
#include <QWidget>

#include "quire/ui/memory_view_data.h"

namespace quire::ui::test {

inline constexpr qint64 kMiB = qint64{1} << 20;
inline constexpr qint64 kGiB = qint64{1} << 30;

// `count` pages whose states cycle Free, Active, Cached, Shared by index.
QList<PageCellView> cyclingPages(int count, int page_size = 256);
// `count` pages all in `state`.
QList<PageCellView> uniformPages(int count, PageCellState state, int page_size = 256);

// What a desktop with two GPUs might show mid-conversation: a model split over
// both, a shared system prompt, one running chat, older chats cached, and the
// rest free. 600 pages of 256 tokens.
MemorySnapshotView realisticSnapshot();

// realisticSnapshot() as a Gemma 3 model shows it: its 600 pages hold the
// 5 global layers of 34, and a window pool of 48 pages the 29 sliding layers'
// last 1,024 tokens of each chat (4 in use, 1 shared, 18 cached, 25 free).
MemorySnapshotView windowPoolSnapshot();

// The widget as it looks now, rendered into an image (no window needed).
QImage render(QWidget& widget);

// Counts the paint events a widget receives and the area they cover.
class PaintCounter : public QObject {
 public:
  explicit PaintCounter(QWidget* widget);
  int count() const { return count_; }
  QRect painted() const { return painted_; }
  void reset() {
    count_ = 0;
    painted_ = QRect();
  }

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  int count_ = 0;
  QRect painted_;
};

// Shows `widget` as a window and waits until its first paints are done, so
// later counts see only what a change causes.
bool showAndSettle(QWidget& widget);

}  // namespace quire::ui::test
