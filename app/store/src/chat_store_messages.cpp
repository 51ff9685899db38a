// Messages: append (committed before the call returns), edit, truncate,
// replies and regeneration, and whole chats as documents.

#include <QJsonDocument>
#include <QtDebug>

#include "chat_store_impl.h"
#include "quire/app/store/token_blob.h"

namespace quire::store {
namespace {

const QString kMessageColumns = QStringLiteral(
    "id, chat_id, position, role, text, tokens, created, updated, stats FROM messages");

Message read_message(const detail::Run& run) {
  Message message;
  message.id = MessageId{run.value(0).toLongLong()};
  message.chat = ChatId{run.value(1).toLongLong()};
  message.position = run.value(2).toInt();
  message.role = role_from_name(run.value(3).toString()).value_or(Role::User);
  message.text = run.value(4).toString();
  if (auto tokens = decode_tokens(run.value(5).toByteArray())) {
    message.tokens = std::move(*tokens);
  } else {
    // Token ids can be rendered again; the text is what matters.
    qWarning("chat store: message %lld has a token blob of odd length; ignored", raw(message.id));
  }
  message.created = detail::from_ms(run.value(6).toLongLong());
  message.updated = detail::from_ms(run.value(7).toLongLong());
  if (!run.value(8).isNull()) {
    message.stats = GenerationStats::from_json(
        QJsonDocument::fromJson(run.value(8).toString().toUtf8()).object());
  }
  return message;
}

// Marks activity on a live chat. False (and NotFound) when the chat is gone.
bool touch_chat(detail::StoreState& d, ChatId chat, qint64 now, bool live_only) {
  detail::Run run(d.sql(), live_only ? QStringLiteral("UPDATE chats SET updated = ?"
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

// The INSERT of one message at the end of its chat; the caller holds the transaction.
std::optional<MessageId> insert_at_end(detail::StoreState& d, ChatId chat, Role role,
                                       const QString& text, std::span<const std::int32_t> tokens,
                                       const std::optional<GenerationStats>& stats, qint64 now) {
  if (!touch_chat(d, chat, now, true)) return std::nullopt;
  detail::Run run(d.sql(),
                  QStringLiteral("INSERT INTO messages"
                                 " (chat_id, position, role, text, tokens, created, updated, stats)"
                                 " VALUES (?, (SELECT COALESCE(MAX(position) + 1, 0) FROM messages"
                                 " WHERE chat_id = ?), ?, ?, ?, ?, ?, ?)"));
  run << raw(chat) << raw(chat) << role_name(role) << text << detail::tokens_value(tokens) << now
      << now << detail::stats_value(stats);
  if (!run.exec()) {
    d.fail_sql(QStringLiteral("add a message"), run.error());
    return std::nullopt;
  }
  return MessageId{run.last_insert_id().toLongLong()};
}

struct Place {
  ChatId chat{};
  int position = 0;
};

std::optional<Place> place_of(detail::StoreState& d, MessageId message) {
  detail::Run run(d.sql(), QStringLiteral("SELECT chat_id, position FROM messages WHERE id = ?"));
  run << raw(message);
  if (!run.exec()) {
    d.fail_sql(QStringLiteral("find a message"), run.error());
    return std::nullopt;
  }
  if (!run.next()) {
    d.fail(StoreError::NotFound, QStringLiteral("There is no message %1.").arg(raw(message)));
    return std::nullopt;
  }
  return Place{ChatId{run.value(0).toLongLong()}, run.value(1).toInt()};
}

bool drop_after(detail::StoreState& d, const Place& place) {
  detail::Run run(d.sql(),
                  QStringLiteral("DELETE FROM messages WHERE chat_id = ? AND position > ?"));
  run << raw(place.chat) << place.position;
  return run.exec() || d.fail_sql(QStringLiteral("remove later messages"), run.error());
}

bool commit(detail::StoreState& d, detail::Transaction& transaction) {
  return transaction.commit() || d.fail_sql(QStringLiteral("commit"), transaction.error());
}

bool begin(detail::StoreState& d, detail::Transaction& transaction) {
  return transaction.ok() || d.fail_sql(QStringLiteral("start a transaction"), transaction.error());
}

GenerationStats reply_stats(const QString& model) {
  GenerationStats stats;
  stats.model = model;
  stats.stop_reason = QString::fromLatin1(kStopInterrupted);
  return stats;
}

}  // namespace

std::optional<MessageId> ChatStore::append_message(ChatId chat, Role role, const QString& text,
                                                   std::span<const std::int32_t> tokens) {
  if (!d_->require_open()) return std::nullopt;
  detail::Transaction transaction(d_->db);
  if (!begin(*d_, transaction)) return std::nullopt;
  const auto id = insert_at_end(*d_, chat, role, text, tokens, std::nullopt, d_->now_ms());
  if (!id || !commit(*d_, transaction)) return std::nullopt;
  d_->succeed();
  emit chat_changed(chat);
  return id;
}

QList<Message> ChatStore::messages(ChatId chat) const {
  QList<Message> messages;
  if (!d_->require_open()) return messages;
  detail::Run run(
      d_->sql(),
      QStringLiteral("SELECT %1 WHERE chat_id = ? ORDER BY position").arg(kMessageColumns));
  run << raw(chat);
  if (!run.exec()) {
    d_->fail_sql(QStringLiteral("load a chat"), run.error());
    return messages;
  }
  while (run.next())
    messages << read_message(run);
  d_->succeed();
  return messages;
}

std::optional<Message> ChatStore::message(MessageId message) const {
  if (!d_->require_open()) return std::nullopt;
  detail::Run run(d_->sql(), QStringLiteral("SELECT %1 WHERE id = ?").arg(kMessageColumns));
  run << raw(message);
  if (!run.exec()) {
    d_->fail_sql(QStringLiteral("load a message"), run.error());
    return std::nullopt;
  }
  if (!run.next()) {
    d_->fail(StoreError::NotFound, QStringLiteral("There is no message %1.").arg(raw(message)));
    return std::nullopt;
  }
  d_->succeed();
  return read_message(run);
}

bool ChatStore::edit_message(MessageId message, const QString& text, Following following) {
  if (!d_->require_open()) return false;
  detail::Transaction transaction(d_->db);
  if (!begin(*d_, transaction)) return false;
  const auto place = place_of(*d_, message);
  if (!place) return false;
  const qint64 now = d_->now_ms();
  {
    detail::Run run(d_->sql(), QStringLiteral("UPDATE messages SET text = ?, tokens = NULL,"
                                              " updated = ? WHERE id = ?"));
    run << text << now << raw(message);
    if (!run.exec()) return d_->fail_sql(QStringLiteral("edit a message"), run.error());
  }
  if (following == Following::Drop && !drop_after(*d_, *place)) return false;
  if (!touch_chat(*d_, place->chat, now, false) || !commit(*d_, transaction)) return false;
  d_->succeed();
  emit chat_changed(place->chat);
  return true;
}

bool ChatStore::truncate_after(MessageId message) {
  if (!d_->require_open()) return false;
  detail::Transaction transaction(d_->db);
  if (!begin(*d_, transaction)) return false;
  const auto place = place_of(*d_, message);
  if (!place || !drop_after(*d_, *place)) return false;
  if (!touch_chat(*d_, place->chat, d_->now_ms(), false) || !commit(*d_, transaction)) return false;
  d_->succeed();
  emit chat_changed(place->chat);
  return true;
}

bool ChatStore::set_message_tokens(MessageId message, std::span<const std::int32_t> tokens) {
  if (!d_->require_open()) return false;
  detail::Run run(d_->sql(), QStringLiteral("UPDATE messages SET tokens = ? WHERE id = ?"));
  run << detail::tokens_value(tokens) << raw(message);
  if (!run.exec()) return d_->fail_sql(QStringLiteral("store token ids"), run.error());
  if (run.rows_affected() == 0) {
    return d_->fail(StoreError::NotFound,
                    QStringLiteral("There is no message %1.").arg(raw(message)));
  }
  d_->succeed();
  return true;
}

std::optional<MessageId> ChatStore::begin_reply(ChatId chat, const QString& model) {
  if (!d_->require_open()) return std::nullopt;
  detail::Transaction transaction(d_->db);
  if (!begin(*d_, transaction)) return std::nullopt;
  const auto id =
      insert_at_end(*d_, chat, Role::Assistant, QString(), {}, reply_stats(model), d_->now_ms());
  if (!id || !commit(*d_, transaction)) return std::nullopt;
  d_->succeed();
  emit chat_changed(chat);
  return id;
}

std::optional<MessageId> ChatStore::replace_last_reply(ChatId chat, const QString& model) {
  if (!d_->require_open()) return std::nullopt;
  detail::Transaction transaction(d_->db);
  if (!begin(*d_, transaction)) return std::nullopt;
  {
    detail::Run run(d_->sql(),
                    QStringLiteral("DELETE FROM messages WHERE id = (SELECT id FROM messages"
                                   " WHERE chat_id = ? ORDER BY position DESC LIMIT 1)"
                                   " AND role = 'assistant'"));
    run << raw(chat);
    if (!run.exec()) {
      d_->fail_sql(QStringLiteral("remove the last reply"), run.error());
      return std::nullopt;
    }
  }
  const auto id =
      insert_at_end(*d_, chat, Role::Assistant, QString(), {}, reply_stats(model), d_->now_ms());
  if (!id || !commit(*d_, transaction)) return std::nullopt;
  d_->succeed();
  emit chat_changed(chat);
  return id;
}

bool ChatStore::write_reply(MessageId message, const QString& text,
                            std::span<const std::int32_t> tokens,
                            const std::optional<GenerationStats>& stats) {
  if (!d_->require_open()) return false;
  detail::Transaction transaction(d_->db);
  if (!begin(*d_, transaction)) return false;
  const auto place = place_of(*d_, message);
  if (!place) return false;
  const qint64 now = d_->now_ms();
  {
    // Only an assistant message is a reply; stats stay as they were unless given.
    detail::Run run(d_->sql(), QStringLiteral("UPDATE messages SET text = ?, tokens = ?,"
                                              " updated = ?, stats = COALESCE(?, stats)"
                                              " WHERE id = ? AND role = 'assistant'"));
    run << text << detail::tokens_value(tokens) << now << detail::stats_value(stats)
        << raw(message);
    if (!run.exec()) return d_->fail_sql(QStringLiteral("save a reply"), run.error());
    if (run.rows_affected() == 0) {
      return d_->fail(StoreError::InvalidArgument,
                      QStringLiteral("Message %1 is not a reply.").arg(raw(message)));
    }
  }
  if (!touch_chat(*d_, place->chat, now, false) || !commit(*d_, transaction)) return false;
  d_->succeed();
  emit chat_changed(place->chat);
  return true;
}

std::optional<ChatDocument> ChatStore::document(ChatId chat) const {
  const auto summary = this->chat(chat);
  if (!summary) return std::nullopt;
  ChatDocument document{summary->title, summary->created, summary->updated, summary->model, {}};
  document.messages = messages(chat);
  if (d_->error != StoreError::None) return std::nullopt;
  return document;
}

std::optional<ChatId> ChatStore::insert_document(const ChatDocument& document) {
  if (!d_->require_open()) return std::nullopt;
  const qint64 now = d_->now_ms();
  const auto ms = [now](const QDateTime& time) {
    return time.isValid() ? time.toMSecsSinceEpoch() : now;
  };
  detail::Transaction transaction(d_->db);
  if (!begin(*d_, transaction)) return std::nullopt;
  ChatId chat{};
  {
    detail::Run run(
        d_->sql(), QStringLiteral("INSERT INTO chats (title, created, updated, model_dir, settings)"
                                  " VALUES (?, ?, ?, ?, ?)"));
    run << document.title << ms(document.created) << ms(document.updated)
        << document.model.model_dir
        << QString::fromUtf8(QJsonDocument(document.model.settings).toJson(QJsonDocument::Compact));
    if (!run.exec()) {
      d_->fail_sql(QStringLiteral("import a chat"), run.error());
      return std::nullopt;
    }
    chat = ChatId{run.last_insert_id().toLongLong()};
  }
  int position = 0;
  for (const Message& message : document.messages) {
    detail::Run run(d_->sql(),
                    QStringLiteral("INSERT INTO messages (chat_id, position, role, text, tokens,"
                                   " created, updated, stats) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"));
    run << raw(chat) << position++ << role_name(message.role) << message.text
        << detail::tokens_value(message.tokens) << ms(message.created)
        << ms(message.updated.isValid() ? message.updated : message.created)
        << detail::stats_value(message.stats);
    if (!run.exec()) {
      d_->fail_sql(QStringLiteral("import a message"), run.error());
      return std::nullopt;
    }
  }
  if (!commit(*d_, transaction)) return std::nullopt;
  d_->succeed();
  emit chat_added(chat);
  return chat;
}

}  // namespace quire::store
