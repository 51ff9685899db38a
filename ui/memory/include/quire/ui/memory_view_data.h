#pragma once

// Plain data shown by the memory panel. ui/ never sees engine or cache types:
// app/ converts the engine's snapshots into these structs and sends them here,
// usually through a queued signal from the engine worker (hence the metatypes).

#include <QList>
#include <QMetaType>
#include <QString>
#include <QStringList>
#include <QtGlobal>

namespace quire::ui {

// Memory of one device, in bytes. The parts are disjoint; what they leave of
// `total` unaccounted is drawn like free memory.
struct DeviceMemoryView {
  QString name;  // e.g. "GPU 0 · NVIDIA H100"
  qint64 total = 0;
  qint64 weights = 0;
  qint64 cache = 0;    // KV cache pages (and residual-window pages) allocated on this device
  qint64 scratch = 0;  // activations and working buffers
  qint64 other = 0;    // used by other processes
  qint64 free = 0;
  // How the weights are stored ("EXL3, codebook MUL1: ..."); may be empty.
  QString weights_detail;
  // The machine's own memory (a CPU without a GPU, or host memory beside the
  // GPUs): it also holds the cache's host-memory tier and Quire itself.
  bool host = false;
  qint64 host_tier = 0;  // the host-memory tier: pages evicted from the cache, kept by hash
  // Quire's own memory beyond the parts above (program, libraries, the
  // window's buffers): its resident set less what they account for.
  qint64 program = 0;

  friend bool operator==(const DeviceMemoryView&, const DeviceMemoryView&) = default;
};

// The four states of a page as the map shows them. They are disjoint: a page
// referenced by more than one sequence is Shared, not Active.
enum class PageCellState : quint8 {
  Free,    // no content
  Active,  // in use by a running job
  Cached,  // unreferenced, content kept under its hash for reuse
  Shared,  // referenced by several sequences
};

inline constexpr int kPageCellStateCount = 4;

struct PageCellView {
  int index = 0;  // page number in the cache
  PageCellState state = PageCellState::Free;
  int refs = 0;
  int tokens = 0;  // valid tokens in the page
  int page_size = 0;
  QString hash_prefix;  // leading hex digits of the page hash; empty when unhashed
  QStringList holders;  // titles of the chats whose sequences hold the page
  // Its content was read back from the cache's disk tier rather than computed
  // (a chat resumed after a restart); drawn in a colour of its own.
  bool from_disk = false;

  friend bool operator==(const PageCellView&, const PageCellView&) = default;
};

// The cache's third tier, page files on disk (Settings → Disk cache).
struct DiskTierView {
  bool enabled = false;    // open for the loaded model
  qint64 used_bytes = 0;   // this model's page files
  qint64 limit_bytes = 0;  // for every model's pages together
  qint64 pages = 0;        // this model's page files
  qint64 saves = 0;        // evicted pages given to the tier
  qint64 restores = 0;     // pages read back from it

  friend bool operator==(const DiskTierView&, const DiskTierView&) = default;
};

// Counts follow PageCellState, so free + active + cached + shared == total.
struct CacheSummaryView {
  int page_size = 0;
  int total_pages = 0;
  int free_pages = 0;
  int active_pages = 0;
  int cached_pages = 0;
  int shared_pages = 0;
  double hit_rate = 0.0;  // 0..1: share of prompt tokens served from the cache
  qint64 reused_tokens = 0;
  qint64 computed_tokens = 0;
  QString format;  // cache format, e.g. "q4"
  qint64 evictions = 0;
  // Replies paused so another could take their pages (on-demand reservation).
  qint64 preemptions = 0;
  qint64 host_saves = 0;
  qint64 host_restores = 0;
  qint64 defragmentations = 0;
  // Pages drawn as restored from disk (PageCellView::from_disk), counted
  // within the states above as well.
  int disk_pages = 0;
  DiskTierView disk;

  friend bool operator==(const CacheSummaryView&, const CacheSummaryView&) = default;
};

// The sliding layers of a model that mixes them with global ones (Gemma 2,
// Gemma 3) keep their pages in a pool of their own: a chat holds there only
// the pages of its window, while the main pool holds every page of the global
// layers. Empty for every other model.
struct WindowPoolView {
  int window_tokens = 0;   // positions each sliding layer attends to
  int sliding_layers = 0;  // layers whose pages are here
  int layers = 0;          // the model's attention layers, both kinds
  CacheSummaryView cache;  // the pool's page counts, size and format
  // Cache memory of the sliding layers (this pool) and of the global ones,
  // over every device: the two add up to the devices' cache.
  qint64 bytes = 0;
  qint64 global_bytes = 0;
  QList<PageCellView> pages;

  bool isEmpty() const { return pages.isEmpty() && cache.total_pages == 0; }

  friend bool operator==(const WindowPoolView&, const WindowPoolView&) = default;
};

// A vision tower beside the model (Gemma 3's SigLIP tower and projector).
// It runs on the CPU, so its weights and the activations of the image it
// reads are in host memory. Empty for a model that cannot see.
struct VisionTowerView {
  QString name;        // "SigLIP tower, Gemma 3 projector"
  QString where;       // "host memory"
  qint64 weights = 0;  // bytes once loaded
  qint64 scratch = 0;  // bytes at the peak of reading one image
  // Why it is not in memory now (images are not yet given to the model, or
  // host memory cannot hold it); empty when it is.
  QString not_loaded;

  bool isEmpty() const { return name.isEmpty(); }

  friend bool operator==(const VisionTowerView&, const VisionTowerView&) = default;
};

// Everything the memory panel shows at one moment. The pages are listed in
// page order, so a page's position in `pages` is its index.
struct MemorySnapshotView {
  QList<DeviceMemoryView> devices;
  QList<PageCellView> pages;
  CacheSummaryView cache;
  // A mixed model's sliding layers' pages; then `pages` and `cache` are the
  // global layers'.
  WindowPoolView window_pool;
  VisionTowerView vision_tower;
  // Tokens the engine has sampled since the model was loaded, over all chats;
  // the chart turns the difference between two snapshots into tokens/s.
  qint64 sampled_tokens = 0;
  // Seconds the engine has spent generating since the model was loaded; the
  // chart divides the tokens by it, so its speed is the reply statistics' rate.
  double generating_seconds = 0;

  // No model loaded: nothing to draw.
  bool isEmpty() const { return devices.isEmpty() && pages.isEmpty() && cache.total_pages == 0; }

  friend bool operator==(const MemorySnapshotView&, const MemorySnapshotView&) = default;
};

// Registers the structs above with the meta-type system, for queued
// connections that name them by string. Safe to call more than once.
void registerMemoryViewMetaTypes();

}  // namespace quire::ui

Q_DECLARE_METATYPE(quire::ui::DeviceMemoryView)
Q_DECLARE_METATYPE(quire::ui::PageCellState)
Q_DECLARE_METATYPE(quire::ui::PageCellView)
Q_DECLARE_METATYPE(quire::ui::DiskTierView)
Q_DECLARE_METATYPE(quire::ui::CacheSummaryView)
Q_DECLARE_METATYPE(quire::ui::WindowPoolView)
Q_DECLARE_METATYPE(quire::ui::VisionTowerView)
Q_DECLARE_METATYPE(quire::ui::MemorySnapshotView)
