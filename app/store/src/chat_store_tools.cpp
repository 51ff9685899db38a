// Tool calls and their results: the calls a reply made, and a Tool message
// per call below it.

#include "chat_store_impl.h"

namespace quire::store {
namespace {

std::optional<Message> load_row(detail::StoreState& d, MessageId message) {
  detail::Run run(
      d.sql(),
      QStringLiteral("SELECT %1 FROM messages m WHERE m.id = ?").arg(detail::kMessageColumns));
  run << raw(message);
  if (!run.exec()) {
    d.fail_sql(QStringLiteral("load a message"), run.error());
    return std::nullopt;
  }
  if (!run.next()) {
    d.fail(StoreError::NotFound, QStringLiteral("There is no message %1.").arg(raw(message)));
    return std::nullopt;
  }
  return detail::read_message(run);
}

// The reply whose calls a result below `leaf` answers: `leaf` itself or the
// assistant message above the tool messages that end at `leaf`.
std::optional<Message> calling_reply(detail::StoreState& d, std::optional<MessageId> leaf) {
  while (leaf) {
    std::optional<Message> message = load_row(d, *leaf);
    if (!message) return std::nullopt;
    if (message->role != Role::Tool) {
      if (message->role == Role::Assistant && !message->tool_calls.isEmpty()) return message;
      break;
    }
    leaf = message->parent;
  }
  d.fail(StoreError::InvalidArgument,
         QStringLiteral("A tool result must follow the reply that made the call."));
  return std::nullopt;
}

}  // namespace

bool ChatStore::set_tool_calls(MessageId message, const QList<ToolCall>& calls) {
  if (!d_->require_open()) return false;
  detail::Transaction transaction(d_->db);
  if (!detail::begin(*d_, transaction)) return false;
  const std::optional<Message> row = load_row(*d_, message);
  if (!row) return false;
  if (row->role != Role::Assistant) {
    return d_->fail(StoreError::InvalidArgument,
                    QStringLiteral("Message %1 is not a reply; only replies make tool calls.")
                        .arg(raw(message)));
  }
  if (!detail::write_tool_columns(*d_, message, calls, std::nullopt) ||
      !detail::touch_chat(*d_, row->chat, d_->now_ms(), false) ||
      !detail::commit(*d_, transaction)) {
    return false;
  }
  d_->succeed();
  emit chat_changed(row->chat);
  return true;
}

std::optional<MessageId> ChatStore::append_tool_result(ChatId chat, const ToolResult& result,
                                                       const QString& text) {
  if (!d_->require_open()) return std::nullopt;
  detail::Transaction transaction(d_->db);
  if (!detail::begin(*d_, transaction)) return std::nullopt;
  const auto leaf = detail::current_leaf(*d_, chat);
  if (!leaf) return std::nullopt;
  const std::optional<Message> reply = calling_reply(*d_, *leaf);
  if (!reply) return std::nullopt;
  const bool known = std::any_of(reply->tool_calls.begin(), reply->tool_calls.end(),
                                 [&](const ToolCall& call) { return call.id == result.call_id; });
  if (!known) {
    d_->fail(StoreError::InvalidArgument,
             QStringLiteral("The reply above made no tool call with the id \"%1\".")
                 .arg(result.call_id));
    return std::nullopt;
  }
  const auto id =
      detail::insert_child(*d_, chat, *leaf, Role::Tool, text, {}, std::nullopt, d_->now_ms());
  if (!id || !detail::write_tool_columns(*d_, *id, {}, result) ||
      !detail::commit(*d_, transaction)) {
    return std::nullopt;
  }
  d_->succeed();
  emit chat_changed(chat);
  return id;
}

bool ChatStore::set_tool_result(MessageId message, const ToolResult& result, const QString& text) {
  if (!d_->require_open()) return false;
  detail::Transaction transaction(d_->db);
  if (!detail::begin(*d_, transaction)) return false;
  const std::optional<Message> row = load_row(*d_, message);
  if (!row) return false;
  if (row->role != Role::Tool) {
    return d_->fail(StoreError::InvalidArgument,
                    QStringLiteral("Message %1 is not a tool result.").arg(raw(message)));
  }
  const qint64 now = d_->now_ms();
  detail::Run run(d_->sql(),
                  QStringLiteral("UPDATE messages SET text = ?, updated = ? WHERE id = ?"));
  run << text << now << raw(message);
  if (!run.exec()) return d_->fail_sql(QStringLiteral("save a tool result"), run.error());
  if (!detail::write_tool_columns(*d_, message, {}, result) ||
      !detail::touch_chat(*d_, row->chat, now, false) || !detail::commit(*d_, transaction)) {
    return false;
  }
  d_->succeed();
  emit chat_changed(row->chat);
  return true;
}

}  // namespace quire::store
