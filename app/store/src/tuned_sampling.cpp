// A chat's DRY, XTC, top-nσ and mirostat settings: their ranges (the
// engine's, so that a chat that saves also samples) and their JSON shape,
// shared by the chat file and the store's tuned_sampling column.

#include <QJsonArray>
#include <cmath>

#include "quire/app/store/chat_types.h"

namespace quire::store {
namespace {

QString out_of_range(const char* name, const char* rule, double value) {
  return QStringLiteral("%1 must be %2 (got %3)")
      .arg(QLatin1String(name), QLatin1String(rule))
      .arg(value);
}

bool finite(double value) {
  return std::isfinite(value);
}

}  // namespace

QString TunedSampling::problem() const {
  if (!(finite(dry_multiplier) && dry_multiplier >= 0))
    return out_of_range("dry_multiplier", "0 or more", dry_multiplier);
  if (!(finite(dry_base) && dry_base >= 1)) return out_of_range("dry_base", "1 or more", dry_base);
  if (dry_allowed_length < 1)
    return out_of_range("dry_allowed_length", "1 or more", dry_allowed_length);
  if (dry_range < 0) return out_of_range("dry_range", "0 or more", dry_range);
  if (dry_sequence_breakers.contains(QString()))
    return QStringLiteral("dry_sequence_breakers must not hold an empty string");
  if (!(xtc_threshold >= 0 && xtc_threshold <= 1))
    return out_of_range("xtc_threshold", "between 0 and 1", xtc_threshold);
  if (!(xtc_probability >= 0 && xtc_probability <= 1))
    return out_of_range("xtc_probability", "between 0 and 1", xtc_probability);
  if (!finite(top_n_sigma)) return out_of_range("top_n_sigma", "a finite number", top_n_sigma);
  if (!(finite(mirostat_tau) && mirostat_tau > 0))
    return out_of_range("mirostat_tau", "greater than 0", mirostat_tau);
  if (!(mirostat_eta > 0 && mirostat_eta <= 1))
    return out_of_range("mirostat_eta", "greater than 0 and at most 1", mirostat_eta);
  return {};
}

QJsonObject TunedSampling::to_json() const {
  return {
      {QStringLiteral("dry_multiplier"), dry_multiplier},
      {QStringLiteral("dry_base"), dry_base},
      {QStringLiteral("dry_allowed_length"), dry_allowed_length},
      {QStringLiteral("dry_range"), dry_range},
      {QStringLiteral("dry_sequence_breakers"), QJsonArray::fromStringList(dry_sequence_breakers)},
      {QStringLiteral("xtc_threshold"), xtc_threshold},
      {QStringLiteral("xtc_probability"), xtc_probability},
      {QStringLiteral("top_n_sigma"), top_n_sigma},
      {QStringLiteral("mirostat"), mirostat ? 2 : 0},
      {QStringLiteral("mirostat_tau"), mirostat_tau},
      {QStringLiteral("mirostat_eta"), mirostat_eta},
  };
}

QString TunedSampling::from_json(const QJsonObject& object, TunedSampling* out) {
  TunedSampling read;
  QString problem;
  const auto number = [&](const char* key, double* field) {
    const QJsonValue value = object.value(QLatin1String(key));
    if (value.isUndefined() || !problem.isEmpty()) return;
    if (!value.isDouble()) {
      problem = QStringLiteral("%1: expected a number").arg(QLatin1String(key));
      return;
    }
    *field = value.toDouble();
  };
  const auto integer = [&](const char* key, int* field) {
    double value = *field;
    number(key, &value);
    if (!problem.isEmpty()) return;
    if (value != std::floor(value) || std::abs(value) > 1e9) {
      problem = QStringLiteral("%1: expected an integer").arg(QLatin1String(key));
      return;
    }
    *field = static_cast<int>(value);
  };
  number("dry_multiplier", &read.dry_multiplier);
  number("dry_base", &read.dry_base);
  integer("dry_allowed_length", &read.dry_allowed_length);
  integer("dry_range", &read.dry_range);
  number("xtc_threshold", &read.xtc_threshold);
  number("xtc_probability", &read.xtc_probability);
  number("top_n_sigma", &read.top_n_sigma);
  number("mirostat_tau", &read.mirostat_tau);
  number("mirostat_eta", &read.mirostat_eta);
  int mode = 0;
  integer("mirostat", &mode);
  if (problem.isEmpty() && mode != 0 && mode != 2) {
    problem = QStringLiteral("mirostat: expected 0 (off) or 2 (mirostat v2)");
  }
  read.mirostat = mode == 2;
  const QJsonValue breakers = object.value(QStringLiteral("dry_sequence_breakers"));
  if (problem.isEmpty() && !breakers.isUndefined()) {
    read.dry_sequence_breakers.clear();
    if (!breakers.isArray()) problem = QStringLiteral("dry_sequence_breakers: expected an array");
    for (const QJsonValue& breaker : breakers.toArray()) {
      if (!breaker.isString()) {
        problem = QStringLiteral("dry_sequence_breakers: expected strings");
        break;
      }
      read.dry_sequence_breakers << breaker.toString();
    }
  }
  if (problem.isEmpty()) problem = read.problem();
  if (problem.isEmpty()) *out = read;
  return problem;
}

}  // namespace quire::store
