#pragma once

// The values each engine setting accepts and the choices it offers. The panel
// builds its fields from these and app's AppSettings checks stored values
// against them, so any value the panel can show is a value that loads.

#include <QList>
#include <QString>
#include <QStringList>
#include <utility>

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
inline constexpr RealRange kManualGb{0, 4096, 2};
inline constexpr RealRange kReserveMib{0, 65536, 0};
inline constexpr IntRange kMaxContext{256, 1 << 20};
inline constexpr IntRange kCacheTokens{256, 1 << 24};
inline constexpr IntRange kHostCacheMib{0, 1 << 20};
inline constexpr IntRange kMaxBatch{1, 256};
inline constexpr IntRange kChunkSize{1, 65536};
inline constexpr RealRange kTemperature{0, 5, 2};
inline constexpr RealRange kTopP{0, 1, 2};
inline constexpr RealRange kMinP{0, 1, 2};
inline constexpr RealRange kRepetitionPenalty{1, 3, 2};
inline constexpr IntRange kTopK{0, 1000};

}  // namespace limits

// How one half (keys or values) of the KV cache is coded, as people choose it.
struct CacheCodingInfo {
  QString id;           // "q4": the coding's short name
  QString name;         // "Q4"
  QString explanation;  // "4-bit integers, a scale per 32"
  double bits_per_value = 0;

  // "Q4 — 4-bit integers, a scale per 32, 4.5 bits per value"
  QString label() const;
};

// FP16, FP8, Q8, Q4: most exact first.
const QList<CacheCodingInfo>& cache_codings();

// The cache format of keys and values coded apart, named as the engine names
// it: "fp16", "q8", "q6" (Q8 keys, Q4 values), "q4", "fp8" for the usual
// pairs, "k<key>v<value>" with each half as "16", "f8", "8" or "4" for the
// others ("kf8v4"). Empty when a coding is unknown.
QString cache_format_id(const QString& key_coding, const QString& value_coding);
// The key and value codings of a format id (the names above, and "k8v4" or
// "kq8vq4" for q6); empty strings when the id is not one.
std::pair<QString, QString> cache_format_codings(const QString& id);
// "Q6 — Q8 keys, Q4 values, 6.5 bits per value": what the pair costs.
QString cache_format_summary(const QString& id);
// Every format id, the usual pairs first: what EngineSettings::cache_format
// may hold.
QStringList cache_format_ids();

// "auto", "cpu", "cuda".
QStringList backend_ids();

// How a reply's cache pages are reserved: "all", "on-demand".
QStringList reservation_ids();
// The one-line explanation the settings show under the choice.
QString reservation_explanation(const QString& id);

}  // namespace quire::ui
