#include "quire/ui/cache_format_choices.h"

namespace quire::ui {

QString CacheCodingChoice::label() const {
  return QStringLiteral("%1 — %2, %3 bits per value")
      .arg(name, explanation, QString::number(bits_per_value));
}

const CacheCodingChoice* CacheFormatChoices::coding(const QString& id) const {
  for (const CacheCodingChoice& each : codings) {
    if (each.id == id) return &each;
  }
  return nullptr;
}

const CacheFormatChoice* CacheFormatChoices::format(const QString& id) const {
  for (const CacheFormatChoice& each : formats) {
    if (each.id == id) return &each;
  }
  return nullptr;
}

QString CacheFormatChoices::id_of(const QString& key_coding, const QString& value_coding) const {
  for (const CacheFormatChoice& each : formats) {
    if (each.key == key_coding && each.value == value_coding) return each.id;
  }
  return {};
}

QString CacheFormatChoices::summary(const QString& id) const {
  const CacheFormatChoice* pair = format(id);
  const CacheCodingChoice* key = pair ? coding(pair->key) : nullptr;
  const CacheCodingChoice* value = pair ? coding(pair->value) : nullptr;
  if (!key || !value) return {};
  const QString bits = QString::number(pair->bits_per_value);
  if (key == value) {
    return QStringLiteral("%1 — %2 keys and values, %3 bits per value")
        .arg(pair->title, key->name, bits);
  }
  return QStringLiteral("%1 — %2 keys, %3 values, %4 bits per value")
      .arg(pair->title, key->name, value->name, bits);
}

}  // namespace quire::ui
