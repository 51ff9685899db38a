// The statements on message rows that the store's operations share: reading
// a row, placing a message in its tree, the current path, adding a child.

#include <QJsonArray>
#include <QJsonDocument>
#include <QtDebug>

#include "chat_store_impl.h"
#include "quire/app/store/token_blob.h"

namespace quire::store::detail {

const QString kMessageColumns = QStringLiteral(
    "m.id, m.chat_id, m.parent_id, m.position, m.role, m.text, m.tokens, m.created, m.updated,"
    " m.stats, m.tool_calls, m.tool_result");

// Each step takes the child selected last (ties: the newest); the recursion
// ends below a leaf, where the step yields NULL.
const QString kPathTable = QStringLiteral(
    "WITH RECURSIVE path(id) AS ("
    " SELECT (SELECT r.id FROM messages r WHERE r.chat_id = ? AND r.parent_id IS NULL"
    " ORDER BY r.selected DESC, r.id DESC LIMIT 1)"
    " UNION ALL"
    " SELECT (SELECT c.id FROM messages c WHERE c.parent_id = path.id"
    " ORDER BY c.selected DESC, c.id DESC LIMIT 1) FROM path WHERE path.id IS NOT NULL) ");

Message read_message(const Run& run) {
  Message message;
  message.id = MessageId{run.value(0).toLongLong()};
  message.chat = ChatId{run.value(1).toLongLong()};
  if (!run.value(2).isNull()) message.parent = MessageId{run.value(2).toLongLong()};
  message.position = run.value(3).toInt();
  message.role = role_from_name(run.value(4).toString()).value_or(Role::User);
  message.text = run.value(5).toString();
  if (auto tokens = decode_tokens(run.value(6).toByteArray())) {
    message.tokens = std::move(*tokens);
  } else {
    // Token ids can be rendered again; the text is what matters.
    qWarning("chat store: message %lld has a token blob of odd length; ignored", raw(message.id));
  }
  message.created = from_ms(run.value(7).toLongLong());
  message.updated = from_ms(run.value(8).toLongLong());
  if (!run.value(9).isNull()) {
    message.stats = GenerationStats::from_json(
        QJsonDocument::fromJson(run.value(9).toString().toUtf8()).object());
  }
  if (!run.value(10).isNull()) {
    for (const QJsonValue& call :
         QJsonDocument::fromJson(run.value(10).toString().toUtf8()).array()) {
      if (auto parsed = ToolCall::from_json(call.toObject())) message.tool_calls << *parsed;
    }
  }
  if (!run.value(11).isNull()) {
    message.tool_result =
        ToolResult::from_json(QJsonDocument::fromJson(run.value(11).toString().toUtf8()).object());
  }
  return message;
}

QVariant tool_calls_value(const QList<ToolCall>& calls) {
  if (calls.isEmpty()) return QVariant(QMetaType::fromType<QString>());  // NULL
  QJsonArray array;
  for (const ToolCall& call : calls)
    array.append(call.to_json());
  return QString::fromUtf8(QJsonDocument(array).toJson(QJsonDocument::Compact));
}

QVariant tool_result_value(const std::optional<ToolResult>& result) {
  if (!result) return QVariant(QMetaType::fromType<QString>());  // NULL
  return QString::fromUtf8(QJsonDocument(result->to_json()).toJson(QJsonDocument::Compact));
}

bool write_tool_columns(StoreState& d, MessageId message, const QList<ToolCall>& calls,
                        const std::optional<ToolResult>& result) {
  Run run(d.sql(),
          QStringLiteral("UPDATE messages SET tool_calls = ?, tool_result = ? WHERE id = ?"));
  run << tool_calls_value(calls) << tool_result_value(result) << raw(message);
  return run.exec() || d.fail_sql(QStringLiteral("save tool calls"), run.error());
}

GenerationStats reply_stats(const QString& model) {
  GenerationStats stats;
  stats.model = model;
  stats.stop_reason = QString::fromLatin1(kStopInterrupted);
  return stats;
}

bool begin(StoreState& d, Transaction& transaction) {
  return transaction.ok() || d.fail_sql(QStringLiteral("start a transaction"), transaction.error());
}

bool commit(StoreState& d, Transaction& transaction) {
  return transaction.commit() || d.fail_sql(QStringLiteral("commit"), transaction.error());
}

bool touch_chat(StoreState& d, ChatId chat, qint64 now, bool live_only) {
  Run run(d.sql(), live_only ? QStringLiteral("UPDATE chats SET updated = ?"
                                              " WHERE id = ? AND deleted_at IS NULL")
                             : QStringLiteral("UPDATE chats SET updated = ? WHERE id = ?"));
  run << now << raw(chat);
  if (!run.exec()) return d.fail_sql(QStringLiteral("update a chat"), run.error());
  if (run.rows_affected() == 0) {
    return d.fail(StoreError::NotFound,
                  QStringLiteral("There is no chat %1 to write to.").arg(raw(chat)));
  }
  return true;
}

std::optional<Place> place_of(StoreState& d, MessageId message) {
  Run run(d.sql(),
          QStringLiteral("SELECT chat_id, parent_id, position FROM messages WHERE id = ?"));
  run << raw(message);
  if (!run.exec()) {
    d.fail_sql(QStringLiteral("find a message"), run.error());
    return std::nullopt;
  }
  if (!run.next()) {
    d.fail(StoreError::NotFound, QStringLiteral("There is no message %1.").arg(raw(message)));
    return std::nullopt;
  }
  Place place{ChatId{run.value(0).toLongLong()}, std::nullopt, run.value(2).toInt()};
  if (!run.value(1).isNull()) place.parent = MessageId{run.value(1).toLongLong()};
  return place;
}

std::optional<std::optional<MessageId>> current_leaf(StoreState& d, ChatId chat) {
  Run run(d.sql(), kPathTable + QStringLiteral("SELECT m.id FROM path JOIN messages m"
                                               " ON m.id = path.id ORDER BY m.position DESC"
                                               " LIMIT 1"));
  run << raw(chat);
  if (!run.exec()) {
    d.fail_sql(QStringLiteral("find the current message"), run.error());
    return std::nullopt;
  }
  if (!run.next()) return std::optional<MessageId>();
  return std::optional<MessageId>(MessageId{run.value(0).toLongLong()});
}

bool select_chain(StoreState& d, ChatId chat, MessageId message) {
  // Deleted branches count too: a branch restored later must not tie with
  // one selected while it was away.
  qint64 next = 0;
  {
    Run run(d.sql(),
            QStringLiteral("SELECT COALESCE(MAX(s), 0) + 1 FROM ("
                           "SELECT MAX(selected) AS s FROM messages WHERE chat_id = ?"
                           " UNION ALL"
                           " SELECT MAX(selected) FROM deleted_messages WHERE chat_id = ?)"));
    run << raw(chat) << raw(chat);
    if (!run.exec() || !run.next())
      return d.fail_sql(QStringLiteral("select a branch"), run.error());
    next = run.value(0).toLongLong();
  }
  Run run(d.sql(), QStringLiteral("WITH RECURSIVE up(id) AS (SELECT ? UNION ALL"
                                  " SELECT m.parent_id FROM messages m JOIN up ON m.id = up.id"
                                  " WHERE m.parent_id IS NOT NULL)"
                                  " UPDATE messages SET selected = ?"
                                  " WHERE id IN (SELECT id FROM up)"));
  run << raw(message) << next;
  return run.exec() || d.fail_sql(QStringLiteral("select a branch"), run.error());
}

std::optional<MessageId> insert_child(StoreState& d, ChatId chat, std::optional<MessageId> parent,
                                      Role role, const QString& text,
                                      std::span<const std::int32_t> tokens,
                                      const std::optional<GenerationStats>& stats, qint64 now) {
  if (!touch_chat(d, chat, now, true)) return std::nullopt;
  int position = 0;
  if (parent) {
    const auto place = place_of(d, *parent);
    if (!place) return std::nullopt;
    if (place->chat != chat) {
      d.fail(StoreError::InvalidArgument,
             QStringLiteral("Message %1 is not in chat %2.").arg(raw(*parent)).arg(raw(chat)));
      return std::nullopt;
    }
    position = place->position + 1;
  }
  MessageId id{};
  {
    Run run(d.sql(), QStringLiteral("INSERT INTO messages (chat_id, parent_id, position, role,"
                                    " text, tokens, created, updated, stats)"
                                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"));
    run << raw(chat) << (parent ? QVariant(raw(*parent)) : QVariant(QMetaType::fromType<qint64>()))
        << position << role_name(role) << text << tokens_value(tokens) << now << now
        << stats_value(stats);
    if (!run.exec()) {
      d.fail_sql(QStringLiteral("add a message"), run.error());
      return std::nullopt;
    }
    id = MessageId{run.last_insert_id().toLongLong()};
  }
  if (!select_chain(d, chat, id)) return std::nullopt;
  return id;
}

bool remove_descendants(StoreState& d, MessageId message) {
  Run run(d.sql(), QStringLiteral("WITH RECURSIVE down(id) AS ("
                                  "SELECT id FROM messages WHERE parent_id = ? UNION ALL"
                                  " SELECT m.id FROM messages m JOIN down ON m.parent_id = down.id)"
                                  " DELETE FROM messages WHERE id IN (SELECT id FROM down)"));
  run << raw(message);
  return run.exec() || d.fail_sql(QStringLiteral("remove later messages"), run.error());
}

}  // namespace quire::store::detail
