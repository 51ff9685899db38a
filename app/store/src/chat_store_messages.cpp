// Messages along the current path: append (committed before the call
// returns), edit, truncate, replies and regeneration.

#include "chat_store_impl.h"

namespace quire::store {
namespace {

using detail::begin;
using detail::commit;

// Adds a message below the current leaf; the caller holds the transaction.
std::optional<MessageId> append_to_path(detail::StoreState& d, ChatId chat, Role role,
                                        const QString& text, std::span<const std::int32_t> tokens,
                                        const std::optional<GenerationStats>& stats) {
  const auto leaf = detail::current_leaf(d, chat);
  if (!leaf) return std::nullopt;
  return detail::insert_child(d, chat, *leaf, role, text, tokens, stats, d.now_ms());
}

}  // namespace

std::optional<MessageId> ChatStore::append_message(ChatId chat, Role role, const QString& text,
                                                   std::span<const std::int32_t> tokens,
                                                   const QList<ChatImage>& images) {
  if (!d_->require_open()) return std::nullopt;
  detail::Transaction transaction(d_->db);
  if (!begin(*d_, transaction)) return std::nullopt;
  const auto id = append_to_path(*d_, chat, role, text, tokens, std::nullopt);
  if (!id || !detail::write_message_images(*d_, *id, images) || !commit(*d_, transaction)) {
    return std::nullopt;
  }
  d_->succeed();
  emit chat_changed(chat);
  return id;
}

QList<Message> ChatStore::messages(ChatId chat) const {
  return current_path(chat);
}

std::optional<Message> ChatStore::message(MessageId message) const {
  if (!d_->require_open()) return std::nullopt;
  detail::Run run(
      d_->sql(),
      QStringLiteral("SELECT %1 FROM messages m WHERE m.id = ?").arg(detail::kMessageColumns));
  run << raw(message);
  if (!run.exec()) {
    d_->fail_sql(QStringLiteral("load a message"), run.error());
    return std::nullopt;
  }
  if (!run.next()) {
    d_->fail(StoreError::NotFound, QStringLiteral("There is no message %1.").arg(raw(message)));
    return std::nullopt;
  }
  QList<Message> read{read_message(run)};
  if (!detail::load_message_images(*d_, read)) return std::nullopt;
  d_->succeed();
  return read.front();
}

bool ChatStore::edit_message(MessageId message, const QString& text, Following following) {
  if (!d_->require_open()) return false;
  detail::Transaction transaction(d_->db);
  if (!begin(*d_, transaction)) return false;
  const auto place = detail::place_of(*d_, message);
  if (!place) return false;
  const qint64 now = d_->now_ms();
  {
    detail::Run run(d_->sql(), QStringLiteral("UPDATE messages SET text = ?, tokens = NULL,"
                                              " updated = ? WHERE id = ?"));
    run << text << now << raw(message);
    if (!run.exec()) return d_->fail_sql(QStringLiteral("edit a message"), run.error());
  }
  if (following == Following::Drop && !detail::remove_descendants(*d_, message)) return false;
  if (!detail::touch_chat(*d_, place->chat, now, false) || !commit(*d_, transaction)) return false;
  d_->succeed();
  emit chat_changed(place->chat);
  return true;
}

bool ChatStore::truncate_after(MessageId message) {
  if (!d_->require_open()) return false;
  detail::Transaction transaction(d_->db);
  if (!begin(*d_, transaction)) return false;
  const auto place = detail::place_of(*d_, message);
  if (!place || !detail::remove_descendants(*d_, message)) return false;
  if (!detail::touch_chat(*d_, place->chat, d_->now_ms(), false) || !commit(*d_, transaction)) {
    return false;
  }
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
      append_to_path(*d_, chat, Role::Assistant, QString(), {}, detail::reply_stats(model));
  if (!id || !commit(*d_, transaction)) return std::nullopt;
  d_->succeed();
  emit chat_changed(chat);
  return id;
}

std::optional<MessageId> ChatStore::replace_last_reply(ChatId chat, const QString& model) {
  if (!d_->require_open()) return std::nullopt;
  detail::Transaction transaction(d_->db);
  if (!begin(*d_, transaction)) return std::nullopt;
  const auto leaf = detail::current_leaf(*d_, chat);
  if (!leaf) return std::nullopt;
  std::optional<MessageId> parent = *leaf;
  if (*leaf) {
    const auto place = detail::place_of(*d_, **leaf);
    if (!place) return std::nullopt;
    // Only an assistant reply is replaced; after anything else the new reply follows.
    detail::Run run(d_->sql(),
                    QStringLiteral("DELETE FROM messages WHERE id = ? AND role = 'assistant'"));
    run << raw(**leaf);
    if (!run.exec()) {
      d_->fail_sql(QStringLiteral("remove the last reply"), run.error());
      return std::nullopt;
    }
    if (run.rows_affected() > 0) parent = place->parent;
  }
  const auto id = detail::insert_child(*d_, chat, parent, Role::Assistant, QString(), {},
                                       detail::reply_stats(model), d_->now_ms());
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
  const auto place = detail::place_of(*d_, message);
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
  if (!detail::touch_chat(*d_, place->chat, now, false) || !commit(*d_, transaction)) return false;
  d_->succeed();
  emit chat_changed(place->chat);
  return true;
}

}  // namespace quire::store
