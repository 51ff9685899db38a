// Tool calls and results as the store keeps them: JSON objects beside their
// message, in the database and in exported files alike.

#include <QJsonValue>

#include "quire/app/store/chat_types.h"

namespace quire::store {
namespace {

constexpr ToolStatus kStatuses[] = {ToolStatus::Allowed, ToolStatus::Denied, ToolStatus::Failed,
                                    ToolStatus::TimedOut, ToolStatus::Cancelled};

std::optional<QString> string_field(const QJsonObject& object, const QString& key) {
  const QJsonValue value = object.value(key);
  if (!value.isString()) return std::nullopt;
  return value.toString();
}

}  // namespace

QString tool_status_name(ToolStatus status) {
  switch (status) {
    case ToolStatus::Allowed:
      return QStringLiteral("allowed");
    case ToolStatus::Denied:
      return QStringLiteral("denied");
    case ToolStatus::Failed:
      return QStringLiteral("failed");
    case ToolStatus::TimedOut:
      return QStringLiteral("timed_out");
    case ToolStatus::Cancelled:
      return QStringLiteral("cancelled");
  }
  return {};
}

std::optional<ToolStatus> tool_status_from_name(const QString& name) {
  for (const ToolStatus status : kStatuses) {
    if (tool_status_name(status) == name) return status;
  }
  return std::nullopt;
}

QJsonObject ToolCall::to_json() const {
  QJsonObject object{{QStringLiteral("id"), id},
                     {QStringLiteral("name"), name},
                     {QStringLiteral("arguments"), arguments}};
  if (!server.isEmpty()) object.insert(QStringLiteral("server"), server);
  return object;
}

std::optional<ToolCall> ToolCall::from_json(const QJsonObject& object) {
  const auto id = string_field(object, QStringLiteral("id"));
  const auto name = string_field(object, QStringLiteral("name"));
  if (!id || !name) return std::nullopt;
  ToolCall call;
  call.id = *id;
  call.name = *name;
  call.arguments = string_field(object, QStringLiteral("arguments")).value_or(QString());
  call.server = string_field(object, QStringLiteral("server")).value_or(QString());
  return call;
}

QJsonObject ToolResult::to_json() const {
  return {{QStringLiteral("call_id"), call_id},
          {QStringLiteral("name"), name},
          {QStringLiteral("status"), tool_status_name(status)}};
}

std::optional<ToolResult> ToolResult::from_json(const QJsonObject& object) {
  const auto call_id = string_field(object, QStringLiteral("call_id"));
  const auto status = tool_status_from_name(
      string_field(object, QStringLiteral("status")).value_or(QStringLiteral("allowed")));
  if (!call_id || !status) return std::nullopt;
  ToolResult result;
  result.call_id = *call_id;
  result.name = string_field(object, QStringLiteral("name")).value_or(QString());
  result.status = *status;
  return result;
}

}  // namespace quire::store
