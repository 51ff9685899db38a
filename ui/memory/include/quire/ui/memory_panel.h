#pragma once

// The memory panel: how each device's memory is split between weights, KV
// cache, scratch and other processes; a vision tower beside the model as an
// item of its own (its bytes, where, or why it is not loaded); the live map
// of cache pages with its
// legend (two maps for a model whose sliding layers keep their pages apart,
// Gemma 2 and 3: the global layers' and the window pool's); and the prefix
// cache's record (hit rate, tokens reused and computed,
// evictions, host tier, defragmentations); and a chart of the last minutes of
// memory use and tokens per second. Without a model it explains what it
// will show instead of drawing empty widgets.

#include <QList>
#include <QWidget>

#include "quire/ui/memory_history.h"
#include "quire/ui/memory_view_data.h"

class QLabel;
class QStackedLayout;
class QVBoxLayout;

namespace quire::ui {

class DeviceMemoryBar;
class MemoryHistoryChart;
class PageMapLegend;
class PageMapWidget;

class MemoryPanel : public QWidget {
  Q_OBJECT

 public:
  explicit MemoryPanel(QWidget* parent = nullptr);

  const MemorySnapshotView& snapshot() const { return snapshot_; }
  bool isShowingEmptyState() const;

  QList<DeviceMemoryBar*> deviceBars() const { return bars_; }
  PageMapWidget* pageMap() const { return page_map_; }
  PageMapLegend* legend() const { return legend_; }
  // The window pool's map and legend (MemorySnapshotView::window_pool),
  // shown only while the model has one.
  bool isShowingWindowPool() const;
  PageMapWidget* windowPageMap() const { return window_map_; }
  PageMapLegend* windowLegend() const { return window_legend_; }
  MemoryHistoryChart* historyChart() const { return chart_; }
  const MemoryHistory& history() const { return history_; }
  // The texts on show, for tests and accessibility tools.
  QString hitRateText() const;
  QString summaryText() const;
  QString cacheShapeText() const;
  // The captions over the two maps and the pool's shape; empty without a pool.
  QString globalLayersCaptionText() const;
  QString slidingLayersCaptionText() const;
  QString windowShapeText() const;
  // The vision tower's line under the devices; empty while the model has none.
  QString visionTowerText() const;

  QSize sizeHint() const override;

 public slots:
  // Shows `snapshot`; parts that did not change are not repainted.
  void setSnapshot(const quire::ui::MemorySnapshotView& snapshot);
  // Adds the snapshot on show to the chart's history as seen at `time_ms`
  // (a steady clock). Called at a regular pace, so the chart's time axis is
  // even whether or not the engine is busy.
  void recordSample(qint64 time_ms);
  // Back to the empty state, as when the model is unloaded; the history ends.
  void clear();
  // The model runs on the remote engine at `endpoint` ("gpu-box:8000"): the
  // panel says its memory is on that machine. "" goes back to the model run here.
  void setRemoteEndpoint(const QString& endpoint);

 private:
  QWidget* buildEmptyState();
  QWidget* buildContent();
  QWidget* buildWindowPoolSection(QWidget* parent);
  void syncDeviceBars();
  void syncWindowPool();
  void syncVisionTower();

  MemorySnapshotView snapshot_;
  MemoryHistory history_;
  QStackedLayout* stack_ = nullptr;
  QWidget* empty_state_ = nullptr;
  QLabel* empty_title_ = nullptr;
  QLabel* empty_text_ = nullptr;
  QWidget* content_ = nullptr;
  QVBoxLayout* devices_layout_ = nullptr;
  QLabel* vision_tower_ = nullptr;
  QList<DeviceMemoryBar*> bars_;
  PageMapWidget* page_map_ = nullptr;
  PageMapLegend* legend_ = nullptr;
  QLabel* shape_label_ = nullptr;
  QLabel* global_caption_ = nullptr;
  QWidget* window_section_ = nullptr;
  QLabel* window_caption_ = nullptr;
  QLabel* window_shape_ = nullptr;
  PageMapLegend* window_legend_ = nullptr;
  PageMapWidget* window_map_ = nullptr;
  QLabel* hit_rate_label_ = nullptr;
  QLabel* summary_label_ = nullptr;
  MemoryHistoryChart* chart_ = nullptr;
};

}  // namespace quire::ui
