#include "memory_snapshot.h"

#include <algorithm>
#include <map>
#include <string>

#include "host_memory_parts.h"
#include "quire/engine/generator/draft_model.h"
#include "quire/engine/generator/image_input.h"
#include "quire/engine/image_prompts/image_preparer.h"
#include "quire/engine/runtime/weights_summary.h"
#include "vision_status.h"

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
    if (page.from_disk && page.state != ui::PageCellState::Free) ++summary.disk_pages;
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
  // The tier's files and limit come from the worker (DiskTier::status).
  summary.disk.saves = stats.disk_saves;
  summary.disk.restores = stats.disk_restores;
  return summary;
}

// What the draft model (speculative decoding) holds on `device`, counted
// with the model's own weights, cache and scratch rather than as memory of
// other processes.
void add_draft_model(ui::DeviceMemoryView& view, engine::ModelRuntime& draft, int device) {
  const std::vector<std::int64_t>& weights = draft.loaded().device_bytes;
  const auto index = static_cast<std::size_t>(device);
  const std::int64_t draft_weights = index < weights.size() ? weights[index] : 0;
  view.weights += draft_weights;
  if (draft_weights > 0) {
    view.weights_detail +=
        QStringLiteral("%1draft model: %2")
            .arg(view.weights_detail.isEmpty() ? QString() : QStringLiteral("; "),
                 QString::fromStdString(engine::summarize_weights(draft.model()).text()));
  }
  for (const cache::DeviceCacheBytes& bytes : draft.cache().stats().devices) {
    if (bytes.device == device) view.cache += bytes.allocated_bytes;
  }
  view.cache += draft.storage().mirror_bytes_on(device);
  for (const engine::DevicePlacement& placed : draft.plan().devices) {
    if (placed.index == device && placed.used()) view.scratch += placed.scratch;
  }
}

// What neither the model nor Quire holds of the device's used memory.
void set_other(ui::DeviceMemoryView& view) {
  const qint64 ours = view.weights + view.cache + view.host_tier + view.scratch + view.program;
  view.other = std::max<qint64>(0, view.total - view.free - ours);
}

QList<ui::DeviceMemoryView> device_views(engine::ModelRuntime& runtime,
                                         const cache::CacheStats& stats,
                                         engine::DraftModel* draft) {
  QList<ui::DeviceMemoryView> views;
  // The cache's pages in host memory (offloaded layers) and its host tier:
  // part of the device that is the machine's memory where there is one (a
  // CPU without a GPU), else of a row of their own.
  const std::int64_t offloaded = runtime.storage().host_layer_bytes();
  const std::int64_t host_tier = runtime.storage().host_tier_bytes();
  const ProcessMemory process = read_process_memory();
  bool host_shown = false;
  const engine::PlacementPlan& plan = runtime.plan();
  const QString weights_detail =
      QString::fromStdString(engine::summarize_weights(runtime.model()).text());
  const std::vector<std::int64_t>& weights = runtime.loaded().device_bytes;
  for (const kernels::DeviceInfo& device : runtime.backend().devices()) {
    ui::DeviceMemoryView view;
    view.name = QString::fromStdString(device.name);
    view.total = device.total_bytes;
    view.free = std::max<std::int64_t>(0, device.free_bytes);
    const auto index = static_cast<std::size_t>(device.index);
    view.weights = index < weights.size() ? weights[index] : 0;
    if (view.weights > 0) view.weights_detail = weights_detail;
    for (const cache::DeviceCacheBytes& bytes : stats.devices) {
      if (bytes.device == device.index) view.cache = bytes.allocated_bytes;
    }
    // The residual window's FP16 pages are the cache's too.
    view.cache += runtime.storage().mirror_bytes_on(device.index);
    // The planner's scratch: what the forward pass allocates per device,
    // including one that holds no layer but the cache of all of them.
    for (const engine::DevicePlacement& placed : plan.devices) {
      if (placed.index == device.index && placed.used()) view.scratch = placed.scratch;
    }
    if (draft != nullptr) add_draft_model(view, draft->runtime(), device.index);
    if (device.host_memory && !host_shown) {
      add_host_parts(view, offloaded, host_tier, process.resident);
      host_shown = true;
    }
    set_other(view);
    views.append(view);
  }
  if (!host_shown && (offloaded > 0 || host_tier > 0)) {
    ui::DeviceMemoryView host;
    host.name = QStringLiteral("Host memory");
    host.total = process.machine_total;
    host.free = process.machine_available;
    add_host_parts(host, offloaded, host_tier, process.resident);
    set_other(host);
    views.append(host);
  }
  return views;
}

// Every page of `pool` in page order; `label_of` names the chat of one of
// the pool's sequences.
template <typename LabelOf>
QList<ui::PageCellView> page_cells(const cache::PageCache& pool, const LabelOf& label_of) {
  QList<ui::PageCellView> cells;
  for (const cache::PageInfo& page : pool.pages()) {
    ui::PageCellView cell;
    cell.index = page.index;
    cell.state = page_cell_state(page);
    cell.refs = page.refs;
    cell.tokens = page.valid_tokens;
    cell.page_size = pool.page_size();
    cell.from_disk = page.from_disk;
    if (page.hashed) {
      cell.hash_prefix = QString::fromStdString(page.hash.hex()).left(kHashPrefixDigits);
    }
    for (const cache::SequenceId holder : page.holders) {
      const QString label = QString::fromStdString(label_of(holder));
      if (!label.isEmpty() && !cell.holders.contains(label)) cell.holders.append(label);
    }
    cells.append(cell);
  }
  std::sort(cells.begin(), cells.end(),
            [](const ui::PageCellView& a, const ui::PageCellView& b) { return a.index < b.index; });
  return cells;
}

// The sliding layers' pool of a mixed model. Its pages name their holders by
// the pool's own sequence ids, so the chats are found through the main ones.
ui::WindowPoolView window_pool_view(const cache::PageCache& cache, const cache::CacheStats& stats,
                                    const engine::Generator& generator, cache::CacheFormat format) {
  const cache::PageCache& pool = *cache.window_pool();
  std::map<cache::SequenceId, cache::SequenceId> owners;
  for (const cache::SequenceId sequence : cache.sequences()) {
    owners.emplace(cache.window_sequence(sequence), sequence);
  }
  ui::WindowPoolView view;
  view.window_tokens = cache.config().layer_window;
  for (const cache::CacheLayer& layer : cache.config().layers) {
    view.sliding_layers += layer.windowed ? 1 : 0;
  }
  view.layers = static_cast<int>(cache.config().layers.size());
  view.pages = page_cells(pool, [&](cache::SequenceId holder) {
    const auto owner = owners.find(holder);
    return owner == owners.end() ? std::string() : generator.label_of(owner->second);
  });
  const cache::CacheStats pool_stats = pool.stats();
  view.cache = cache_summary(pool_stats, view.pages, format);
  // The main pool's bytes per device include the window pool's.
  for (const cache::DeviceCacheBytes& device : pool_stats.devices)
    view.bytes += device.allocated_bytes;
  for (const cache::DeviceCacheBytes& device : stats.devices)
    view.global_bytes += device.allocated_bytes;
  view.global_bytes -= view.bytes;
  return view;
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
  const cache::CacheFormat format = runtime.options().cache_format;
  ui::MemorySnapshotView snapshot;
  snapshot.pages =
      page_cells(cache, [&](cache::SequenceId holder) { return generator.label_of(holder); });
  snapshot.cache = cache_summary(stats, snapshot.pages, format);
  if (cache.window_pool() != nullptr) {
    snapshot.window_pool = window_pool_view(cache, stats, generator, format);
  }
  snapshot.devices = device_views(runtime, stats, generator.draft_model());
  // A tower whose family's images reach the model is loaded with it
  // (images::open_image_preparer); any other is not read at all.
  const engine::vision::VisionAvailability& vision = runtime.model().vision;
  snapshot.vision_tower =
      vision_tower_view(vision, runtime.plan().vision_tower,
                        vision.tower && engine::ImagePreparer::takes_images_of(*vision.tower));
  snapshot.sampled_tokens = generator.sampled_tokens();
  snapshot.generating_seconds = generator.generating_seconds();
  return snapshot;
}

}  // namespace quire::gui
