#include "memory_fixtures.h"

#include <QPaintEvent>
#include <QTest>

namespace quire::ui::test {

QList<PageCellView> cyclingPages(int count, int page_size) {
  QList<PageCellView> pages;
  pages.reserve(count);
  for (int i = 0; i < count; ++i) {
    PageCellView page;
    page.index = i;
    page.state = static_cast<PageCellState>(i % kPageCellStateCount);
    page.page_size = page_size;
    page.tokens = page.state == PageCellState::Free ? 0 : page_size;
    page.refs = page.state == PageCellState::Shared   ? 2
                : page.state == PageCellState::Active ? 1
                                                      : 0;
    pages << page;
  }
  return pages;
}

QList<PageCellView> uniformPages(int count, PageCellState state, int page_size) {
  QList<PageCellView> pages = cyclingPages(count, page_size);
  for (PageCellView& page : pages)
    page.state = state;
  return pages;
}

MemorySnapshotView realisticSnapshot() {
  MemorySnapshotView snapshot;
  snapshot.devices = {
      {QStringLiteral("GPU 0 · NVIDIA GeForce RTX 4090"), 24 * kGiB, 9 * kGiB + 310 * kMiB,
       7 * kGiB + 512 * kMiB, 620 * kMiB, 1 * kGiB + 180 * kMiB, 0,
       QStringLiteral("EXL3, codebook MUL1: attention 4 bits, MLP 4 bits, head 6 bits")},
      {QStringLiteral("GPU 1 · NVIDIA GeForce RTX 3090"), 24 * kGiB, 8 * kGiB + 900 * kMiB,
       7 * kGiB + 512 * kMiB, 410 * kMiB, 240 * kMiB, 0,
       QStringLiteral("EXL3, codebook MUL1: attention 4 bits, MLP 4 bits, head 6 bits")},
  };
  for (DeviceMemoryView& device : snapshot.devices) {
    device.free = device.total - device.weights - device.cache - device.scratch - device.other;
  }

  constexpr int kPages = 600;
  constexpr int kPageSize = 256;
  const QStringList chats{
      QStringLiteral("Trip to Lisbon"), QStringLiteral("Refactor the parser"),
      QStringLiteral("Recipe ideas"),   QStringLiteral("Quarterly report"),
      QStringLiteral("Bedtime story"),  QStringLiteral("SQL window functions"),
  };
  auto page = [&](int index, PageCellState state, int tokens, int refs, QStringList holders) {
    PageCellView view;
    view.index = index;
    view.state = state;
    view.tokens = tokens;
    view.page_size = kPageSize;
    view.refs = refs;
    view.holders = std::move(holders);
    if (tokens == kPageSize) {
      view.hash_prefix =
          QStringLiteral("%1").arg((index * 2654435761u) & 0xffffffffu, 8, 16, QLatin1Char('0'));
    }
    return view;
  };

  QList<PageCellView>& pages = snapshot.pages;
  int at = 0;
  // A system prompt shared by the three open chats.
  for (; at < 6; ++at) {
    pages << page(at, PageCellState::Shared, kPageSize, 3, chats.mid(0, 3));
  }
  // Three chats running, each with its own conversation after the prompt.
  for (int chat = 0; chat < 3; ++chat) {
    const int length = 70 + 25 * chat;
    for (int i = 0; i < length; ++i, ++at) {
      const int tokens = i + 1 == length ? 97 + 40 * chat : kPageSize;
      pages << page(at, PageCellState::Active, tokens, 1, {chats[chat]});
    }
  }
  // Older chats, finished but kept for their next turn, with a few pages
  // already evicted (free) in between.
  while (at < 470) {
    const bool evicted = (at * 7) % 23 == 0;
    pages << (evicted ? page(at, PageCellState::Free, 0, 0, {})
                      : page(at, PageCellState::Cached, kPageSize, 0, {}));
    ++at;
  }
  for (; at < kPages; ++at)
    pages << page(at, PageCellState::Free, 0, 0, {});

  CacheSummaryView& cache = snapshot.cache;
  cache.page_size = kPageSize;
  cache.total_pages = kPages;
  for (const PageCellView& p : pages) {
    switch (p.state) {
      case PageCellState::Free:
        ++cache.free_pages;
        break;
      case PageCellState::Active:
        ++cache.active_pages;
        break;
      case PageCellState::Cached:
        ++cache.cached_pages;
        break;
      case PageCellState::Shared:
        ++cache.shared_pages;
        break;
    }
  }
  cache.reused_tokens = 184320;
  cache.computed_tokens = 70212;
  cache.hit_rate =
      double(cache.reused_tokens) / double(cache.reused_tokens + cache.computed_tokens);
  cache.format = QStringLiteral("q6");
  cache.evictions = 142;
  cache.host_saves = 96;
  cache.host_restores = 31;
  cache.defragmentations = 2;
  return snapshot;
}

MemorySnapshotView windowPoolSnapshot() {
  MemorySnapshotView snapshot = realisticSnapshot();
  WindowPoolView& pool = snapshot.window_pool;
  pool.window_tokens = 1024;
  pool.sliding_layers = 29;
  pool.layers = 34;
  pool.pages = uniformPages(48, PageCellState::Free);
  auto set = [&](int first, int count, PageCellState state, int refs, const QString& holder) {
    for (int i = first; i < first + count; ++i) {
      PageCellView& page = pool.pages[i];
      page.state = state;
      page.refs = refs;
      page.tokens = 256;
      if (!holder.isEmpty()) page.holders = {holder};
    }
  };
  set(0, 1, PageCellState::Shared, 2, QStringLiteral("Trip to Lisbon"));
  set(1, 4, PageCellState::Active, 1, QStringLiteral("Refactor the parser"));
  set(5, 18, PageCellState::Cached, 0, QString());
  pool.cache = snapshot.cache;
  pool.cache.total_pages = 48;
  pool.cache.active_pages = 4;
  pool.cache.shared_pages = 1;
  pool.cache.cached_pages = 18;
  pool.cache.free_pages = 25;
  // Of the two devices' 15 GiB of cache.
  pool.bytes = 1260 * kMiB;
  pool.global_bytes = 15 * kGiB - pool.bytes;
  return snapshot;
}

QImage render(QWidget& widget) {
  QImage image(widget.size(), QImage::Format_ARGB32_Premultiplied);
  image.fill(Qt::transparent);
  widget.render(&image);
  return image;
}

PaintCounter::PaintCounter(QWidget* widget) : QObject(widget) {
  widget->installEventFilter(this);
}

bool PaintCounter::eventFilter(QObject* watched, QEvent* event) {
  if (event->type() == QEvent::Paint) {
    ++count_;
    painted_ = painted_.united(static_cast<QPaintEvent*>(event)->rect());
  }
  return QObject::eventFilter(watched, event);
}

bool showAndSettle(QWidget& widget) {
  widget.show();
  if (!QTest::qWaitForWindowExposed(&widget)) return false;
  // Let the first paint and any follow-up layout passes through.
  QTest::qWait(50);
  return true;
}

}  // namespace quire::ui::test
