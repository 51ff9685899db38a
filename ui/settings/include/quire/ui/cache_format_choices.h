#pragma once

// The cache formats the settings offer, as plain data. The engine's cache
// names and prices its formats; the application hands that table to the
// panel (app's cache_format_choices()), so the panel never keeps a copy.

#include <QList>
#include <QString>

namespace quire::ui {

// How one half (keys or values) of the KV cache is coded, as people choose it.
struct CacheCodingChoice {
  QString id;           // "q4": the coding's short name
  QString name;         // "Q4"
  QString explanation;  // "4-bit integers, a scale per 32 values"
  double bits_per_value = 0;

  // "Q4 — 4-bit integers, a scale per 32 values, 4.5 bits per value"
  QString label() const;
};

// One pair of codings under the engine's name for it.
struct CacheFormatChoice {
  QString id;     // "q6", "kf8v4"
  QString key;    // the coding of keys: a CacheCodingChoice id
  QString value;  // and of values
  QString title;  // "Q6", "K FP8, V Q4"
  double bits_per_value = 0;
};

struct CacheFormatChoices {
  QList<CacheCodingChoice> codings;  // most exact first
  QList<CacheFormatChoice> formats;  // the usual pairs first

  const CacheCodingChoice* coding(const QString& id) const;
  const CacheFormatChoice* format(const QString& id) const;
  // The id of the pair with these codings; empty when none is offered.
  QString id_of(const QString& key_coding, const QString& value_coding) const;
  // "Q6 — Q8 keys, Q4 values, 6.5 bits per value": what the pair costs;
  // empty for an id that is not offered.
  QString summary(const QString& id) const;
};

}  // namespace quire::ui
