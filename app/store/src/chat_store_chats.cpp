// Chats: create, rename, soft delete with undo, purge, and the lists.

#include <QJsonDocument>

#include "chat_store_impl.h"
#include "quire/app/store/token_blob.h"

namespace quire::store {
namespace detail {

const QString kSummaryColumns = QStringLiteral(
    "c.id, c.title, c.created, c.updated, c.model_dir, c.settings, c.deleted_at,"
    " (SELECT COUNT(*) FROM messages m WHERE m.chat_id = c.id)");

ChatSummary read_summary(const Run& run) {
  ChatSummary chat;
  chat.id = ChatId{run.value(0).toLongLong()};
  chat.title = run.value(1).toString();
  chat.created = from_ms(run.value(2).toLongLong());
  chat.updated = from_ms(run.value(3).toLongLong());
  chat.model.model_dir = run.value(4).toString();
  chat.model.settings = QJsonDocument::fromJson(run.value(5).toString().toUtf8()).object();
  if (!run.value(6).isNull()) chat.deleted = from_ms(run.value(6).toLongLong());
  chat.message_count = run.value(7).toInt();
  return chat;
}

QVariant tokens_value(std::span<const std::int32_t> tokens) {
  if (tokens.empty()) return QVariant(QMetaType::fromType<QByteArray>());  // NULL
  return encode_tokens(tokens);
}

QVariant stats_value(const std::optional<GenerationStats>& stats) {
  if (!stats) return QVariant(QMetaType::fromType<QString>());  // NULL
  return QString::fromUtf8(QJsonDocument(stats->to_json()).toJson(QJsonDocument::Compact));
}

}  // namespace detail

namespace {

QString settings_text(const ModelUse& model) {
  return QString::fromUtf8(QJsonDocument(model.settings).toJson(QJsonDocument::Compact));
}

QList<ChatSummary> summaries(detail::StoreState& d, const QString& where_and_order,
                             const QVariantList& values = {}) {
  QList<ChatSummary> chats;
  if (!d.require_open()) return chats;
  detail::Run run(
      d.sql(),
      QStringLiteral("SELECT %1 FROM chats c %2").arg(detail::kSummaryColumns, where_and_order));
  for (const QVariant& value : values)
    run << value;
  if (!run.exec()) {
    d.fail_sql(QStringLiteral("list the chats"), run.error());
    return chats;
  }
  while (run.next())
    chats << detail::read_summary(run);
  d.succeed();
  return chats;
}

// Runs an UPDATE of one chat: `values`, then the chat's id, are bound in order.
// NotFound when no row matched (no such chat, or not in the state required).
bool update_chat(detail::StoreState& d, const QString& sql, const QVariantList& values, ChatId chat,
                 const QString& what) {
  if (!d.require_open()) return false;
  detail::Run run(d.sql(), sql);
  for (const QVariant& value : values)
    run << value;
  run << raw(chat);
  if (!run.exec()) return d.fail_sql(what, run.error());
  if (run.rows_affected() == 0) {
    return d.fail(
        StoreError::NotFound,
        QStringLiteral("Could not %1: there is no such chat (%2).").arg(what).arg(raw(chat)));
  }
  d.succeed();
  return true;
}

}  // namespace

std::optional<ChatId> ChatStore::create_chat(const QString& title, const ModelUse& model) {
  if (!d_->require_open()) return std::nullopt;
  const qint64 now = d_->now_ms();
  ChatId id{};
  {
    detail::Run run(
        d_->sql(), QStringLiteral("INSERT INTO chats (title, created, updated, model_dir, settings)"
                                  " VALUES (?, ?, ?, ?, ?)"));
    run << title << now << now << model.model_dir << settings_text(model);
    if (!run.exec()) {
      d_->fail_sql(QStringLiteral("create a chat"), run.error());
      return std::nullopt;
    }
    id = ChatId{run.last_insert_id().toLongLong()};
  }
  // Signals go out after the statement is released: a slot may use the store.
  d_->succeed();
  emit chat_added(id);
  return id;
}

bool ChatStore::rename_chat(ChatId chat, const QString& title) {
  if (!update_chat(*d_, QStringLiteral("UPDATE chats SET title = ? WHERE id = ?"), {title}, chat,
                   QStringLiteral("rename a chat"))) {
    return false;
  }
  emit chat_changed(chat);
  return true;
}

bool ChatStore::set_chat_model(ChatId chat, const ModelUse& model) {
  if (!update_chat(*d_, QStringLiteral("UPDATE chats SET model_dir = ?, settings = ? WHERE id = ?"),
                   {model.model_dir, settings_text(model)}, chat,
                   QStringLiteral("record a chat's model"))) {
    return false;
  }
  emit chat_changed(chat);
  return true;
}

bool ChatStore::delete_chat(ChatId chat) {
  if (!update_chat(*d_,
                   QStringLiteral("UPDATE chats SET deleted_at = ?"
                                  " WHERE id = ? AND deleted_at IS NULL"),
                   {d_->now_ms()}, chat, QStringLiteral("delete a chat"))) {
    return false;
  }
  emit chat_removed(chat);
  return true;
}

bool ChatStore::restore_chat(ChatId chat) {
  if (!update_chat(*d_,
                   QStringLiteral("UPDATE chats SET deleted_at = NULL"
                                  " WHERE id = ? AND deleted_at IS NOT NULL"),
                   {}, chat, QStringLiteral("restore a chat"))) {
    return false;
  }
  emit chat_added(chat);
  return true;
}

int ChatStore::purge_deleted(const QDateTime& deleted_before) {
  if (!d_->require_open()) return -1;
  {
    // Deleted branches are out of the search index already.
    detail::Run run(d_->sql(), QStringLiteral("DELETE FROM deleted_messages WHERE deleted_at < ?"));
    run << deleted_before.toMSecsSinceEpoch();
    if (!run.exec()) {
      d_->fail_sql(QStringLiteral("remove deleted branches"), run.error());
      return -1;
    }
  }
  // Messages go with their chat (ON DELETE CASCADE); the search triggers
  // remove them from the index.
  detail::Run run(d_->sql(), QStringLiteral("DELETE FROM chats"
                                            " WHERE deleted_at IS NOT NULL AND deleted_at < ?"));
  run << deleted_before.toMSecsSinceEpoch();
  if (!run.exec()) {
    d_->fail_sql(QStringLiteral("remove deleted chats"), run.error());
    return -1;
  }
  d_->succeed();
  return run.rows_affected();
}

int ChatStore::purge_previous_sessions() {
  if (!d_->require_open()) return -1;
  return purge_deleted(d_->opened_at);
}

QList<ChatSummary> ChatStore::list_chats() const {
  return summaries(*d_, QStringLiteral("WHERE c.deleted_at IS NULL"
                                       " ORDER BY c.updated DESC, c.id DESC"));
}

QList<ChatSummary> ChatStore::deleted_chats() const {
  return summaries(*d_, QStringLiteral("WHERE c.deleted_at IS NOT NULL"
                                       " ORDER BY c.deleted_at DESC, c.id DESC"));
}

std::optional<ChatSummary> ChatStore::chat(ChatId chat) const {
  const QList<ChatSummary> found = summaries(*d_, QStringLiteral("WHERE c.id = ?"), {raw(chat)});
  if (found.isEmpty()) {
    if (d_->error == StoreError::None) {
      d_->fail(StoreError::NotFound, QStringLiteral("There is no chat %1.").arg(raw(chat)));
    }
    return std::nullopt;
  }
  return found.first();
}

}  // namespace quire::store
