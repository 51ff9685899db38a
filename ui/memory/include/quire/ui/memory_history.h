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
  qint64 used_bytes = 0;   // what the device bars call used, over every device
  qint64 total_bytes = 0;  // memory of the devices that hold the model
  double tokens_per_second = 0;

  friend bool operator==(const MemoryHistoryPoint&, const MemoryHistoryPoint&) = default;
};

class MemoryHistory {
 public:
  static constexpr qint64 kDefaultWindowMs = 5 * 60 * 1000;

  explicit MemoryHistory(qint64 window_ms = kDefaultWindowMs) : window_ms_(window_ms) {}

  // Records `snapshot` as seen at `time_ms` (non-decreasing). The speed is the
  // growth of snapshot.sampled_tokens since the previous sample over the
  // growth of snapshot.generating_seconds (the time spent generating, so the
  // rate the reply statistics show), or over the time between the samples
  // when the snapshot does not count that; a counter that went backwards (a
  // new model) starts afresh.
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
  double last_generating_seconds_ = 0;
};

// Bytes used on a device, as its bar's header states them (usedBytes in
// memory_text.h): the model's weights, cache and scratch, and other use.
qint64 used_bytes(const DeviceMemoryView& device);

}  // namespace quire::ui
