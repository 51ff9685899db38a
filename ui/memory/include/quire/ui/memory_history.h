#pragma once

// The last minutes of memory use and generation speed, sampled at a steady
// pace from memory snapshots. Plain data, so the chart only draws and the
// arithmetic (used bytes, tokens per second between two samples, the window)
// is tested on its own.

#include <QList>
#include <QtGlobal>
#include <optional>

#include "quire/ui/memory_view_data.h"

namespace quire::ui {

struct MemoryHistoryPoint {
  qint64 time_ms = 0;      // on the caller's clock
  qint64 used_bytes = 0;   // weights + cache + scratch over every device
  qint64 total_bytes = 0;  // memory of the devices that hold the model
  double tokens_per_second = 0;

  friend bool operator==(const MemoryHistoryPoint&, const MemoryHistoryPoint&) = default;
};

class MemoryHistory {
 public:
  static constexpr qint64 kDefaultWindowMs = 5 * 60 * 1000;

  explicit MemoryHistory(qint64 window_ms = kDefaultWindowMs) : window_ms_(window_ms) {}

  // Records `snapshot` as seen at `time_ms` (non-decreasing). The speed is the
  // growth of snapshot.sampled_tokens since the previous sample over the time
  // between them; a counter that went backwards (a new model) starts afresh.
  // Samples older than the window are dropped.
  void add(const MemorySnapshotView& snapshot, qint64 time_ms);
  void clear();

  const QList<MemoryHistoryPoint>& points() const { return points_; }
  qint64 windowMs() const { return window_ms_; }
  // The largest speed and memory in the window (for the axes).
  double peakTokensPerSecond() const;
  qint64 peakTotalBytes() const;

 private:
  qint64 window_ms_;
  QList<MemoryHistoryPoint> points_;
  std::optional<qint64> last_tokens_;
};

// Bytes the model holds on a device: weights, cache and scratch.
qint64 used_bytes(const DeviceMemoryView& device);

}  // namespace quire::ui
