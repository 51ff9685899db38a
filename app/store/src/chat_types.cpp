#include "quire/app/store/chat_types.h"

namespace quire::store {

QString role_name(Role role) {
  switch (role) {
    case Role::System:
      return QStringLiteral("system");
    case Role::User:
      return QStringLiteral("user");
    case Role::Assistant:
      return QStringLiteral("assistant");
  }
  return {};
}

std::optional<Role> role_from_name(const QString& name) {
  for (Role role : {Role::System, Role::User, Role::Assistant}) {
    if (role_name(role) == name) return role;
  }
  return std::nullopt;
}

QJsonObject GenerationStats::to_json() const {
  return QJsonObject{
      {QStringLiteral("prompt_tokens"), prompt_tokens},
      {QStringLiteral("cached_tokens"), cached_tokens},
      {QStringLiteral("computed_tokens"), computed_tokens},
      {QStringLiteral("generated_tokens"), generated_tokens},
      {QStringLiteral("time_to_first_token_ms"), time_to_first_token_ms},
      {QStringLiteral("tokens_per_second"), tokens_per_second},
      {QStringLiteral("stop_reason"), stop_reason},
      {QStringLiteral("model"), model},
  };
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
  return stats;
}

}  // namespace quire::store
