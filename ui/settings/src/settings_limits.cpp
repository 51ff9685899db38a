#include "quire/ui/settings_limits.h"

namespace quire::ui {

QString CacheFormatInfo::label() const {
  return QStringLiteral("%1 — %2, %3 bits per value")
      .arg(name, explanation, QString::number(bits_per_value));
}

const QList<CacheFormatInfo>& cache_formats() {
  // Bits per value count the FP16 scale that integer formats store for every
  // group of 32 values, so they match what a token of cache really costs.
  static const QList<CacheFormatInfo> formats = {
      {QStringLiteral("fp16"), QStringLiteral("FP16"),
       QStringLiteral("16-bit floating-point keys and values"), 16},
      {QStringLiteral("q8"), QStringLiteral("Q8"), QStringLiteral("8-bit keys and values"), 8.5},
      {QStringLiteral("q6"), QStringLiteral("Q6"), QStringLiteral("8-bit keys, 4-bit values"), 6.5},
      {QStringLiteral("q4"), QStringLiteral("Q4"), QStringLiteral("4-bit keys and values"), 4.5},
      {QStringLiteral("fp8"), QStringLiteral("FP8"),
       QStringLiteral("8-bit floating-point keys and values"), 8},
  };
  return formats;
}

QStringList cache_format_ids() {
  QStringList ids;
  for (const CacheFormatInfo& format : cache_formats())
    ids.append(format.id);
  return ids;
}

QStringList backend_ids() {
  return {QStringLiteral("auto"), QStringLiteral("cpu"), QStringLiteral("cuda")};
}

QStringList reservation_ids() {
  return {QStringLiteral("all"), QStringLiteral("on-demand")};
}

QString reservation_explanation(const QString& id) {
  if (id == QLatin1String("all")) {
    return QStringLiteral(
        "Reserve every page a reply may need when it starts (no reply is ever "
        "paused)");
  }
  if (id == QLatin1String("on-demand")) {
    return QStringLiteral(
        "Allocate pages as replies grow (more chats at once; a reply may pause "
        "while others finish)");
  }
  return {};
}

}  // namespace quire::ui
