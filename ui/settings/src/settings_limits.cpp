#include "quire/ui/settings_limits.h"

namespace quire::ui {

namespace {

// The short form of a coding inside "k…v…".
QString digit_of(const QString& coding) {
  if (coding == QLatin1String("fp16")) return QStringLiteral("16");
  if (coding == QLatin1String("fp8")) return QStringLiteral("f8");
  if (coding == QLatin1String("q8")) return QStringLiteral("8");
  if (coding == QLatin1String("q4")) return QStringLiteral("4");
  return {};
}

QString coding_of_part(const QString& part) {
  for (const CacheCodingInfo& coding : cache_codings()) {
    if (part == coding.id || part == digit_of(coding.id)) return coding.id;
  }
  return {};
}

const CacheCodingInfo* find_coding(const QString& id) {
  for (const CacheCodingInfo& coding : cache_codings()) {
    if (coding.id == id) return &coding;
  }
  return nullptr;
}

}  // namespace

QString CacheCodingInfo::label() const {
  return QStringLiteral("%1 — %2, %3 bits per value")
      .arg(name, explanation, QString::number(bits_per_value));
}

const QList<CacheCodingInfo>& cache_codings() {
  // Bits per value count the FP16 scale that integer codings store for every
  // group of 32 values, so they match what a token of cache really costs.
  static const QList<CacheCodingInfo> codings = {
      {QStringLiteral("fp16"), QStringLiteral("FP16"), QStringLiteral("16-bit floating point"), 16},
      {QStringLiteral("fp8"), QStringLiteral("FP8"),
       QStringLiteral("8-bit floating point, a scale per page and head"), 8},
      {QStringLiteral("q8"), QStringLiteral("Q8"),
       QStringLiteral("8-bit integers, a scale per 32 values"), 8.5},
      {QStringLiteral("q4"), QStringLiteral("Q4"),
       QStringLiteral("4-bit integers, a scale per 32 values"), 4.5},
  };
  return codings;
}

QString cache_format_id(const QString& key_coding, const QString& value_coding) {
  if (!find_coding(key_coding) || !find_coding(value_coding)) return {};
  if (key_coding == value_coding) return key_coding;
  if (key_coding == QLatin1String("q8") && value_coding == QLatin1String("q4")) {
    return QStringLiteral("q6");
  }
  return QStringLiteral("k%1v%2").arg(digit_of(key_coding), digit_of(value_coding));
}

std::pair<QString, QString> cache_format_codings(const QString& id) {
  const QString lower = id.toLower();
  if (find_coding(lower)) return {lower, lower};
  if (lower == QLatin1String("q6")) return {QStringLiteral("q8"), QStringLiteral("q4")};
  // No coding's name holds a 'v', so the value's part starts at the last one.
  const qsizetype v = lower.lastIndexOf(QLatin1Char('v'));
  if (!lower.startsWith(QLatin1Char('k')) || v < 2) return {};
  const QString key = coding_of_part(lower.mid(1, v - 1));
  const QString value = coding_of_part(lower.mid(v + 1));
  if (key.isEmpty() || value.isEmpty()) return {};
  return {key, value};
}

QString cache_format_summary(const QString& id) {
  const auto [key, value] = cache_format_codings(id);
  const CacheCodingInfo* k = find_coding(key);
  const CacheCodingInfo* v = find_coding(value);
  if (!k || !v) return {};
  const QString bits = QString::number((k->bits_per_value + v->bits_per_value) / 2);
  const QString canonical = cache_format_id(key, value);
  const QString name = canonical.startsWith(QLatin1Char('k'))
                           ? QStringLiteral("K %1, V %2").arg(k->name, v->name)
                           : canonical.toUpper();
  if (key == value) {
    return QStringLiteral("%1 — %2 keys and values, %3 bits per value").arg(name, k->name, bits);
  }
  return QStringLiteral("%1 — %2 keys, %3 values, %4 bits per value")
      .arg(name, k->name, v->name, bits);
}

QStringList cache_format_ids() {
  QStringList ids{QStringLiteral("fp16"), QStringLiteral("q8"), QStringLiteral("q6"),
                  QStringLiteral("q4"), QStringLiteral("fp8")};
  for (const CacheCodingInfo& key : cache_codings()) {
    for (const CacheCodingInfo& value : cache_codings()) {
      const QString id = cache_format_id(key.id, value.id);
      if (!ids.contains(id)) ids.append(id);
    }
  }
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
