#include "memory_snapshot.h"

#include <algorithm>

namespace quire::gui {
namespace {

constexpr int kHashPrefixDigits = 8;

ui::CacheSummaryView cache_summary(const cache::CacheStats& stats,
                                   const QList<ui::PageCellView>& pages,
                                   cache::CacheFormat format) {
  ui::CacheSummaryView summary;
  summary.page_size = stats.page_size;
  summary.total_pages = static_cast<int>(pages.size());
  // Counted from the cells, so the legend's numbers add up to what is drawn.
  for (const ui::PageCellView& page : pages) {
    switch (page.state) {
      case ui::PageCellState::Free:
        ++summary.free_pages;
        break;
      case ui::PageCellState::Active:
        ++summary.active_pages;
        break;
      case ui::PageCellState::Cached:
        ++summary.cached_pages;
        break;
      case ui::PageCellState::Shared:
        ++summary.shared_pages;
        break;
    }
  }
  summary.hit_rate = stats.hit_rate();
  summary.reused_tokens = stats.served_tokens();
  summary.computed_tokens = stats.computed_tokens;
  const std::string_view title = cache::format_info(format).title;
  summary.format = QString::fromUtf8(title.data(), static_cast<qsizetype>(title.size()));
  summary.evictions = stats.evictions;
  summary.preemptions = stats.preemptions;
  summary.host_saves = stats.host_saves;
  summary.host_restores = stats.host_restores;
  summary.defragmentations = stats.defragmentations;
  return summary;
}

QList<ui::DeviceMemoryView> device_views(engine::ModelRuntime& runtime,
                                         const cache::CacheStats& stats) {
  QList<ui::DeviceMemoryView> views;
  const engine::PlacementPlan& plan = runtime.plan();
  const std::vector<std::int64_t>& weights = runtime.loaded().device_bytes;
  for (const kernels::DeviceInfo& device : runtime.backend().devices()) {
    ui::DeviceMemoryView view;
    view.name = QString::fromStdString(device.name);
    view.total = device.total_bytes;
    view.free = std::max<std::int64_t>(0, device.free_bytes);
    const auto index = static_cast<std::size_t>(device.index);
    view.weights = index < weights.size() ? weights[index] : 0;
    for (const cache::DeviceCacheBytes& bytes : stats.devices) {
      if (bytes.device == device.index) view.cache = bytes.allocated_bytes;
    }
    // The planner's scratch: what the forward pass allocates per device,
    // including one that holds no layer but the cache of all of them.
    for (const engine::DevicePlacement& placed : plan.devices) {
      if (placed.index == device.index && placed.used()) view.scratch = placed.scratch;
    }
    const qint64 ours = view.weights + view.cache + view.scratch;
    view.other = std::max<qint64>(0, view.total - view.free - ours);
    views.append(view);
  }
  return views;
}

}  // namespace

ui::PageCellState page_cell_state(const cache::PageInfo& page) {
  if (page.refs > 1) return ui::PageCellState::Shared;
  if (page.refs == 1) return ui::PageCellState::Active;
  return page.state == cache::PageState::Cached ? ui::PageCellState::Cached
                                                : ui::PageCellState::Free;
}

ui::MemorySnapshotView memory_snapshot(engine::ModelRuntime& runtime,
                                       const engine::Generator& generator) {
  const cache::PageCache& cache = runtime.cache();
  const cache::CacheStats stats = cache.stats();
  ui::MemorySnapshotView snapshot;
  for (const cache::PageInfo& page : cache.pages()) {
    ui::PageCellView cell;
    cell.index = page.index;
    cell.state = page_cell_state(page);
    cell.refs = page.refs;
    cell.tokens = page.valid_tokens;
    cell.page_size = cache.page_size();
    if (page.hashed) {
      cell.hash_prefix = QString::fromStdString(page.hash.hex()).left(kHashPrefixDigits);
    }
    for (const cache::SequenceId holder : page.holders) {
      const QString label = QString::fromStdString(generator.label_of(holder));
      if (!label.isEmpty() && !cell.holders.contains(label)) cell.holders.append(label);
    }
    snapshot.pages.append(cell);
  }
  std::sort(snapshot.pages.begin(), snapshot.pages.end(),
            [](const ui::PageCellView& a, const ui::PageCellView& b) { return a.index < b.index; });
  snapshot.cache = cache_summary(stats, snapshot.pages, runtime.options().cache_format);
  snapshot.devices = device_views(runtime, stats);
  snapshot.sampled_tokens = generator.sampled_tokens();
  snapshot.generating_seconds = generator.generating_seconds();
  return snapshot;
}

}  // namespace quire::gui
