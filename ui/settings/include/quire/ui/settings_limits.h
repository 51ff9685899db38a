#pragma once

// The values each engine setting accepts and the choices it offers. The panel
// builds its fields from these and app's AppSettings checks stored values
// against them, so any value the panel can show is a value that loads.

#include <QString>
#include <QStringList>

namespace quire::ui {

struct IntRange {
  int min = 0;
  int max = 0;
  bool contains(int value) const { return value >= min && value <= max; }
};

struct RealRange {
  double min = 0;
  double max = 0;
  int decimals = 0;  // what the panel shows and edits
  bool contains(double value) const { return value >= min && value <= max; }
};

namespace limits {

inline constexpr int kMaxRecentModels = 10;
inline constexpr IntRange kDeviceIndex{0, 63};
// A device index, or -1: each layer's pages on its own device.
inline constexpr IntRange kCacheDevice{-1, kDeviceIndex.max};
inline constexpr RealRange kManualGb{0, 4096, 2};
inline constexpr RealRange kReserveMib{0, 65536, 0};
inline constexpr IntRange kMaxContext{256, 1 << 20};
inline constexpr IntRange kCacheTokens{256, 1 << 24};
inline constexpr IntRange kHostCacheMib{0, 1 << 20};
// The disk tier's limit, every model's pages together: at least a few long
// chats of a small model, at most 4 TiB.
inline constexpr IntRange kDiskCacheMib{256, 1 << 22};
inline constexpr int kDefaultDiskCacheMib = 4096;
inline constexpr IntRange kMaxBatch{1, 256};
// Chats whose newest page the residual window keeps in FP16: at most a batch.
inline constexpr IntRange kResidualWindow{0, kMaxBatch.max};
inline constexpr IntRange kChunkSize{1, 65536};
inline constexpr RealRange kTemperature{0, 5, 2};
inline constexpr RealRange kTopP{0, 1, 2};
inline constexpr RealRange kMinP{0, 1, 2};
inline constexpr RealRange kRepetitionPenalty{1, 3, 2};
inline constexpr IntRange kTopK{0, 1000};
// The engine's bounds on a draft (engine::DraftSettings::max_tokens).
inline constexpr IntRange kDraftTokens{1, 64};
// The application's server: ports below 1024 need privileges it should not have.
inline constexpr IntRange kServerPort{1024, 65535};
inline constexpr int kDefaultServerPort = 8642;  // quire-cli serve's default too
// How long one tool call may take before it counts as timed out, in seconds.
inline constexpr IntRange kToolCallTimeoutSeconds{1, 3600};
inline constexpr int kDefaultToolCallTimeoutSeconds = 60;

}  // namespace limits

// "auto", "cpu", "cuda".
QStringList backend_ids();

// How a reply's cache pages are reserved: "all", "on-demand".
QStringList reservation_ids();
// How replies draft (DraftDefaults::method): "off", "ngram" and "model".
QStringList draft_method_ids();
// The one-line explanation the settings show under the choice.
QString reservation_explanation(const QString& id);

// Where the cache's pages live: "device", "offloaded", "offload-global".
QStringList cache_residence_ids();
// The one-line explanation the settings show under the choice.
QString cache_residence_explanation(const QString& id);

}  // namespace quire::ui
