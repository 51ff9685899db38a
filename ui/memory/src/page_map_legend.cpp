#include "quire/ui/page_map_legend.h"

#include <QEvent>
#include <QFontMetrics>
#include <QPainter>
#include <numeric>
#include <optional>

#include "quire/ui/memory_style.h"
#include "quire/ui/memory_text.h"
#include "swatch.h"

namespace quire::ui {
namespace {

// Legend order: what is busy first, then what is kept, then what is empty.
constexpr std::array<PageCellState, kPageCellStateCount> kLegendOrder{
    PageCellState::Active, PageCellState::Shared, PageCellState::Cached, PageCellState::Free};

detail::LegendEntry entryFor(const PageStateCounts& counts, PageCellState state) {
  const int total = counts.total();
  const int n = counts[state];
  QString note;
  if (total > 0) note = QStringLiteral("(%1)").arg(formatPercent(double(n) / double(total)));
  return {pageStateLabel(state), groupDigits(n), note};
}

std::optional<detail::LegendEntry> fromDiskEntry(const PageStateCounts& counts) {
  if (counts.from_disk <= 0) return std::nullopt;
  const int total = counts.total();
  QString note;
  if (total > 0) {
    note = QStringLiteral("(%1)").arg(formatPercent(double(counts.from_disk) / double(total)));
  }
  return detail::LegendEntry{fromDiskLabel(), groupDigits(counts.from_disk), note};
}

// The states' entries in kLegendOrder, then the restored pages' if any.
QList<detail::LegendEntry> entriesFor(const PageStateCounts& counts) {
  QList<detail::LegendEntry> entries;
  for (PageCellState state : kLegendOrder)
    entries << entryFor(counts, state);
  if (const std::optional<detail::LegendEntry> disk = fromDiskEntry(counts)) entries << *disk;
  return entries;
}

QString entryLine(const detail::LegendEntry& entry) {
  QString text = entry.label + u' ' + entry.value;
  if (!entry.note.isEmpty()) text += u' ' + entry.note;
  return text;
}

}  // namespace

int PageStateCounts::total() const {
  return std::accumulate(counts.begin(), counts.end(), 0);
}

PageStateCounts PageStateCounts::fromSummary(const CacheSummaryView& cache) {
  PageStateCounts result;
  result[PageCellState::Free] = cache.free_pages;
  result[PageCellState::Active] = cache.active_pages;
  result[PageCellState::Cached] = cache.cached_pages;
  result[PageCellState::Shared] = cache.shared_pages;
  result.from_disk = cache.disk_pages;
  return result;
}

PageStateCounts PageStateCounts::fromPages(const QList<PageCellView>& pages) {
  PageStateCounts result;
  for (const PageCellView& page : pages) {
    ++result[page.state];
    if (page.from_disk && page.state != PageCellState::Free) ++result.from_disk;
  }
  return result;
}

PageMapLegend::PageMapLegend(QWidget* parent) : QWidget(parent) {
  QSizePolicy policy(QSizePolicy::Expanding, QSizePolicy::Fixed);
  policy.setHeightForWidth(true);
  setSizePolicy(policy);
  setAccessibleName(tr("Page map legend"));
}

void PageMapLegend::setCounts(const PageStateCounts& counts) {
  if (counts == counts_) return;
  counts_ = counts;
  QStringList description;
  for (PageCellState state : kLegendOrder)
    description << entryText(state);
  if (const QString disk = fromDiskEntryText(); !disk.isEmpty()) description << disk;
  setAccessibleDescription(description.join(QStringLiteral(", ")));
  const int height = heightForWidth(width());
  if (height != laid_out_height_) {
    laid_out_height_ = height;
    updateGeometry();
  }
  update();
}

QString PageMapLegend::entryText(PageCellState state) const {
  return entryLine(entryFor(counts_, state));
}

QString PageMapLegend::fromDiskEntryText() const {
  const std::optional<detail::LegendEntry> entry = fromDiskEntry(counts_);
  return entry ? entryLine(*entry) : QString();
}

int PageMapLegend::heightForWidth(int width) const {
  const QFontMetrics label_metrics(font());
  const QFontMetrics value_metrics(detail::boldFont(font()));
  return detail::legendHeight(
      detail::flowLegend(entriesFor(counts_), label_metrics, value_metrics, width));
}

QSize PageMapLegend::sizeHint() const {
  constexpr int kPreferredWidth = 420;
  return QSize(kPreferredWidth, heightForWidth(kPreferredWidth));
}

QSize PageMapLegend::minimumSizeHint() const {
  constexpr int kMinimumWidth = 160;
  return QSize(kMinimumWidth, heightForWidth(kMinimumWidth));
}

void PageMapLegend::changeEvent(QEvent* event) {
  if (event->type() == QEvent::FontChange) {
    laid_out_height_ = -1;
    updateGeometry();
  }
  if (event->type() == QEvent::FontChange || event->type() == QEvent::PaletteChange) update();
  QWidget::changeEvent(event);
}

void PageMapLegend::paintEvent(QPaintEvent* /*event*/) {
  const QFont bold = detail::boldFont(font());
  const QList<detail::LegendEntry> entries = entriesFor(counts_);
  const QList<QRect> rects =
      detail::flowLegend(entries, QFontMetrics(font()), QFontMetrics(bold), width());
  QPainter painter(this);
  for (qsizetype i = 0; i < entries.size(); ++i) {
    const QRect swatch = detail::legendSwatchRect(rects[i]);
    if (i >= kPageCellStateCount) {
      // The entry after the states': pages restored from disk.
      painter.fillRect(swatch, fromDiskColor());
      detail::paintLegendText(painter, rects[i], entries[i], font(), bold, palette());
      continue;
    }
    const PageCellState state = kLegendOrder[static_cast<std::size_t>(i)];
    detail::paintPageCell(painter, swatch, state, pageStateColor(state, palette()));
    if (state == PageCellState::Free) {
      // The free swatch is the track colour; an outline keeps it from
      // vanishing into the window.
      painter.setPen(outlineColor(palette()));
      painter.drawRect(swatch.adjusted(0, 0, -1, -1));
    }
    detail::paintLegendText(painter, rects[i], entries[i], font(), bold, palette());
  }
}

}  // namespace quire::ui
