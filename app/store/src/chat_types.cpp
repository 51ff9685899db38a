#include "quire/app/store/chat_types.h"

#include <QHash>
#include <algorithm>
#include <cmath>

namespace quire::store {

QString role_name(Role role) {
  switch (role) {
    case Role::System:
      return QStringLiteral("system");
    case Role::User:
      return QStringLiteral("user");
    case Role::Assistant:
      return QStringLiteral("assistant");
    case Role::Tool:
      return QStringLiteral("tool");
  }
  return {};
}

std::optional<Role> role_from_name(const QString& name) {
  for (Role role : {Role::System, Role::User, Role::Assistant, Role::Tool}) {
    if (role_name(role) == name) return role;
  }
  return std::nullopt;
}

QJsonObject GenerationStats::to_json() const {
  QJsonObject object{
      {QStringLiteral("prompt_tokens"), prompt_tokens},
      {QStringLiteral("cached_tokens"), cached_tokens},
      {QStringLiteral("computed_tokens"), computed_tokens},
      {QStringLiteral("generated_tokens"), generated_tokens},
      {QStringLiteral("time_to_first_token_ms"), time_to_first_token_ms},
      {QStringLiteral("tokens_per_second"), tokens_per_second},
      {QStringLiteral("stop_reason"), stop_reason},
      {QStringLiteral("model"), model},
  };
  if (!endpoint.isEmpty()) object.insert(QStringLiteral("endpoint"), endpoint);
  // Only for replies that drafted: the others' statistics read as before.
  if (drafted_tokens > 0) {
    object.insert(QStringLiteral("drafted_tokens"), drafted_tokens);
    object.insert(QStringLiteral("accepted_tokens"), accepted_tokens);
  }
  // Likewise only for replies that read pages from the disk tier.
  if (disk_tokens > 0) object.insert(QStringLiteral("disk_tokens"), disk_tokens);
  return object;
}

GenerationStats GenerationStats::from_json(const QJsonObject& object) {
  GenerationStats stats;
  stats.prompt_tokens = object.value(QStringLiteral("prompt_tokens")).toInt();
  stats.cached_tokens = object.value(QStringLiteral("cached_tokens")).toInt();
  stats.computed_tokens = object.value(QStringLiteral("computed_tokens")).toInt();
  stats.generated_tokens = object.value(QStringLiteral("generated_tokens")).toInt();
  stats.time_to_first_token_ms = object.value(QStringLiteral("time_to_first_token_ms")).toDouble();
  stats.tokens_per_second = object.value(QStringLiteral("tokens_per_second")).toDouble();
  stats.stop_reason = object.value(QStringLiteral("stop_reason")).toString();
  stats.model = object.value(QStringLiteral("model")).toString();
  stats.endpoint = object.value(QStringLiteral("endpoint")).toString();
  stats.drafted_tokens = object.value(QStringLiteral("drafted_tokens")).toInt();
  stats.accepted_tokens = object.value(QStringLiteral("accepted_tokens")).toInt();
  stats.disk_tokens = object.value(QStringLiteral("disk_tokens")).toInt();
  return stats;
}

QString ChatSettings::problem() const {
  const auto check = [](const std::optional<double>& value, const char* name, bool ok,
                        const char* rule) {
    if (!value || ok) return QString();
    return QStringLiteral("%1 must be %2 (got %3)")
        .arg(QLatin1String(name), QLatin1String(rule))
        .arg(*value);
  };
  const double t = temperature.value_or(0);
  const double p = top_p.value_or(1);
  const double m = min_p.value_or(0);
  const double r = repetition_penalty.value_or(1);
  for (const QString& problem : {
           check(temperature, "temperature", t >= 0 && std::isfinite(t), "0 or more"),
           check(top_p, "top_p", p > 0 && p <= 1, "greater than 0 and at most 1"),
           check(min_p, "min_p", m >= 0 && m <= 1, "between 0 and 1"),
           check(repetition_penalty, "repetition_penalty", r > 0 && std::isfinite(r),
                 "greater than 0"),
       }) {
    if (!problem.isEmpty()) return problem;
  }
  if (max_new_tokens && *max_new_tokens < 1) {
    return QStringLiteral("max_new_tokens must be 1 or more (got %1)").arg(*max_new_tokens);
  }
  if (tuned_sampling) {
    const QString tuned = tuned_sampling->problem();
    if (!tuned.isEmpty()) return tuned;
  }
  if (banned_strings.contains(QString()))
    return QStringLiteral("banned_strings must not hold an empty string");
  for (auto it = logit_bias_text.begin(); it != logit_bias_text.end(); ++it) {
    if (it.key().isEmpty()) return QStringLiteral("logit_bias must not name an empty text");
    if (!(it.value() >= -kLogitBiasLimit && it.value() <= kLogitBiasLimit)) {
      return QStringLiteral("logit_bias for \"%1\" must be from -100 to 100 (got %2)")
          .arg(it.key())
          .arg(it.value());
    }
  }
  if (context_overflow && !kContextOverflowPolicies.contains(*context_overflow)) {
    return QStringLiteral("context_overflow must be %1 (got \"%2\")")
        .arg(kContextOverflowPolicies.join(QStringLiteral(", ")), *context_overflow);
  }
  return {};
}

QList<Message> current_path(const ChatDocument& document) {
  const QList<Message>& messages = document.messages;
  const bool branched = std::any_of(messages.begin(), messages.end(),
                                    [](const Message& m) { return raw(m.id) != 0; });
  if (!branched || messages.isEmpty()) return messages;
  QHash<qint64, qsizetype> index_of;
  for (qsizetype i = 0; i < messages.size(); ++i)
    index_of.insert(raw(messages[i].id), i);
  qsizetype at = messages.size() - 1;
  if (document.current) at = index_of.value(raw(*document.current), at);
  QList<Message> path;
  // Bounded by the message count, so a malformed cycle cannot loop forever.
  while (at >= 0 && path.size() < messages.size()) {
    path.prepend(messages[at]);
    const auto& parent = messages[at].parent;
    at = parent ? index_of.value(raw(*parent), -1) : -1;
  }
  return path;
}

}  // namespace quire::store
