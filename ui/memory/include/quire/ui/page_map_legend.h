#pragma once

// The key to the page map: a swatch per page state with its page count and
// share of the cache, flowing onto a second line when the panel is narrow;
// while pages restored from disk are drawn, one more for them.

#include <QWidget>
#include <array>

#include "quire/ui/memory_view_data.h"

namespace quire::ui {

struct PageStateCounts {
  std::array<int, kPageCellStateCount> counts{};
  // Pages drawn as restored from disk; they are counted in their states too.
  int from_disk = 0;

  int& operator[](PageCellState state) { return counts[static_cast<std::size_t>(state)]; }
  int operator[](PageCellState state) const { return counts[static_cast<std::size_t>(state)]; }
  int total() const;

  static PageStateCounts fromSummary(const CacheSummaryView& cache);
  static PageStateCounts fromPages(const QList<PageCellView>& pages);

  friend bool operator==(const PageStateCounts&, const PageStateCounts&) = default;
};

class PageMapLegend : public QWidget {
  Q_OBJECT

 public:
  explicit PageMapLegend(QWidget* parent = nullptr);

  void setCounts(const PageStateCounts& counts);
  const PageStateCounts& counts() const { return counts_; }
  int count(PageCellState state) const { return counts_[state]; }
  // What one entry reads, e.g. "In use 40 (6.7%)".
  QString entryText(PageCellState state) const;
  // The entry of pages restored from disk, "Restored from disk 12 (2.0%)";
  // empty while there are none (and the entry is not shown).
  QString fromDiskEntryText() const;

  QSize sizeHint() const override;
  QSize minimumSizeHint() const override;
  bool hasHeightForWidth() const override { return true; }
  int heightForWidth(int width) const override;

 protected:
  void paintEvent(QPaintEvent* event) override;
  void changeEvent(QEvent* event) override;

 private:
  PageStateCounts counts_;
  int laid_out_height_ = -1;
};

}  // namespace quire::ui
