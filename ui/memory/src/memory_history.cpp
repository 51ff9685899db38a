#include "quire/ui/memory_history.h"

#include <algorithm>

#include "quire/ui/memory_text.h"

namespace quire::ui {

qint64 used_bytes(const DeviceMemoryView& device) {
  return usedBytes(device);
}

void MemoryHistory::add(const MemorySnapshotView& snapshot, qint64 time_ms) {
  MemoryHistoryPoint point;
  point.time_ms = time_ms;
  for (const DeviceMemoryView& device : snapshot.devices) {
    point.used_bytes += used_bytes(device);
    point.total_bytes += device.total;
  }
  const bool continues = last_tokens_ && snapshot.sampled_tokens >= *last_tokens_ &&
                         !points_.isEmpty() && time_ms > points_.last().time_ms;
  if (continues) {
    const double generating = snapshot.generating_seconds - last_generating_seconds_;
    const double seconds = generating > 0
                               ? generating
                               : static_cast<double>(time_ms - points_.last().time_ms) / 1000.0;
    point.tokens_per_second =
        static_cast<double>(snapshot.sampled_tokens - *last_tokens_) / seconds;
  }
  last_generating_seconds_ = snapshot.generating_seconds;
  last_tokens_ = snapshot.isEmpty() ? std::nullopt : std::optional<qint64>(snapshot.sampled_tokens);
  points_.append(point);
  const qint64 oldest = time_ms - window_ms_;
  const auto keep = std::find_if(points_.begin(), points_.end(),
                                 [&](const MemoryHistoryPoint& p) { return p.time_ms >= oldest; });
  points_.erase(points_.begin(), keep);
}

void MemoryHistory::clear() {
  points_.clear();
  last_tokens_.reset();
  last_generating_seconds_ = 0;
}

double MemoryHistory::peakTokensPerSecond() const {
  double peak = 0;
  for (const MemoryHistoryPoint& point : points_)
    peak = std::max(peak, point.tokens_per_second);
  return peak;
}

qint64 MemoryHistory::peakTotalBytes() const {
  qint64 peak = 0;
  for (const MemoryHistoryPoint& point : points_)
    peak = std::max(peak, point.total_bytes);
  return peak;
}

}  // namespace quire::ui
