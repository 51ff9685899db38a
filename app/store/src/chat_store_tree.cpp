// Chats as trees: the current path, siblings and switching between them,
// adding a message or a reply below any message, and deleting a branch with
// undo.

#include "chat_store_impl.h"

namespace quire::store {
namespace {

// The deleted rows keep every column, so a restored branch is what it was.
const QString kRowColumns = QStringLiteral(
    "id, chat_id, parent_id, position, selected, role, text, tokens, created, updated, stats,"
    " tool_calls, tool_result");

QList<Message> read_messages(detail::StoreState& d, detail::Run& run, const QString& what) {
  QList<Message> messages;
  if (!run.exec()) {
    d.fail_sql(what, run.error());
    return messages;
  }
  while (run.next())
    messages << detail::read_message(run);
  if (!detail::load_message_images(d, messages)) return {};
  d.succeed();
  return messages;
}

}  // namespace

QList<Message> ChatStore::current_path(ChatId chat) const {
  if (!d_->require_open()) return {};
  detail::Run run(d_->sql(),
                  detail::kPathTable + QStringLiteral("SELECT %1 FROM path JOIN messages m"
                                                      " ON m.id = path.id ORDER BY m.position")
                                           .arg(detail::kMessageColumns));
  run << raw(chat);
  return read_messages(*d_, run, QStringLiteral("load a chat"));
}

QList<Message> ChatStore::message_tree(ChatId chat) const {
  if (!d_->require_open()) return {};
  detail::Run run(d_->sql(), QStringLiteral("SELECT %1 FROM messages m WHERE m.chat_id = ?"
                                            " ORDER BY m.position, m.id")
                                 .arg(detail::kMessageColumns));
  run << raw(chat);
  return read_messages(*d_, run, QStringLiteral("load a chat"));
}

std::optional<Siblings> ChatStore::siblings(MessageId message) const {
  if (!d_->require_open()) return std::nullopt;
  const auto place = detail::place_of(*d_, message);
  if (!place) return std::nullopt;
  detail::Run run(d_->sql(), QStringLiteral("SELECT id FROM messages"
                                            " WHERE chat_id = ? AND parent_id IS ? ORDER BY id"));
  run << raw(place->chat)
      << (place->parent ? QVariant(raw(*place->parent)) : QVariant(QMetaType::fromType<qint64>()));
  if (!run.exec()) {
    d_->fail_sql(QStringLiteral("find a message's siblings"), run.error());
    return std::nullopt;
  }
  Siblings siblings;
  while (run.next()) {
    const MessageId id{run.value(0).toLongLong()};
    if (id == message) siblings.index = static_cast<int>(siblings.ids.size());
    siblings.ids << id;
  }
  d_->succeed();
  return siblings;
}

bool ChatStore::select_message(MessageId message) {
  if (!d_->require_open()) return false;
  detail::Transaction transaction(d_->db);
  if (!detail::begin(*d_, transaction)) return false;
  const auto place = detail::place_of(*d_, message);
  if (!place || !detail::select_chain(*d_, place->chat, message) ||
      !detail::commit(*d_, transaction)) {
    return false;
  }
  d_->succeed();
  emit chat_changed(place->chat);
  return true;
}

std::optional<MessageId> ChatStore::add_message(ChatId chat, std::optional<MessageId> parent,
                                                Role role, const QString& text,
                                                std::span<const std::int32_t> tokens,
                                                const QList<ChatImage>& images) {
  if (!d_->require_open()) return std::nullopt;
  detail::Transaction transaction(d_->db);
  if (!detail::begin(*d_, transaction)) return std::nullopt;
  const auto id =
      detail::insert_child(*d_, chat, parent, role, text, tokens, std::nullopt, d_->now_ms());
  if (!id || !detail::write_message_images(*d_, *id, images) || !detail::commit(*d_, transaction)) {
    return std::nullopt;
  }
  d_->succeed();
  emit chat_changed(chat);
  return id;
}

std::optional<MessageId> ChatStore::begin_reply_after(MessageId parent, const QString& model) {
  if (!d_->require_open()) return std::nullopt;
  detail::Transaction transaction(d_->db);
  if (!detail::begin(*d_, transaction)) return std::nullopt;
  const auto place = detail::place_of(*d_, parent);
  if (!place) return std::nullopt;
  const auto id = detail::insert_child(*d_, place->chat, parent, Role::Assistant, QString(), {},
                                       detail::reply_stats(model), d_->now_ms());
  if (!id || !detail::commit(*d_, transaction)) return std::nullopt;
  d_->succeed();
  emit chat_changed(place->chat);
  return id;
}

bool ChatStore::delete_branch(MessageId message) {
  if (!d_->require_open()) return false;
  detail::Transaction transaction(d_->db);
  if (!detail::begin(*d_, transaction)) return false;
  const auto place = detail::place_of(*d_, message);
  if (!place) return false;
  const qint64 now = d_->now_ms();
  if (!detail::touch_chat(*d_, place->chat, now, true)) return false;
  {
    detail::Run run(
        d_->sql(), QStringLiteral("WITH RECURSIVE down(id) AS (SELECT ? UNION ALL"
                                  " SELECT m.id FROM messages m JOIN down ON m.parent_id = down.id)"
                                  " INSERT INTO deleted_messages (%1, branch, deleted_at)"
                                  " SELECT %1, ?, ? FROM messages"
                                  " WHERE id IN (SELECT id FROM down)")
                       .arg(kRowColumns));
    run << raw(message) << raw(message) << now;
    if (!run.exec()) return d_->fail_sql(QStringLiteral("delete a branch"), run.error());
  }
  {
    detail::Run run(d_->sql(),
                    QStringLiteral("DELETE FROM messages WHERE id IN"
                                   " (SELECT id FROM deleted_messages WHERE branch = ?)"));
    run << raw(message);
    if (!run.exec()) return d_->fail_sql(QStringLiteral("delete a branch"), run.error());
  }
  if (!detail::commit(*d_, transaction)) return false;
  d_->succeed();
  emit chat_changed(place->chat);
  return true;
}

bool ChatStore::restore_branch(MessageId message) {
  if (!d_->require_open()) return false;
  detail::Transaction transaction(d_->db);
  if (!detail::begin(*d_, transaction)) return false;
  ChatId chat{};
  {
    // The branch's own message, and whether the message it followed is still there.
    detail::Run run(d_->sql(), QStringLiteral("SELECT d.chat_id, d.parent_id IS NULL OR EXISTS"
                                              " (SELECT 1 FROM messages p WHERE p.id = d.parent_id)"
                                              " FROM deleted_messages d"
                                              " WHERE d.id = ? AND d.branch = d.id"));
    run << raw(message);
    if (!run.exec()) return d_->fail_sql(QStringLiteral("restore a branch"), run.error());
    if (!run.next()) {
      return d_->fail(
          StoreError::NotFound,
          QStringLiteral("There is no deleted branch at message %1 to restore.").arg(raw(message)));
    }
    chat = ChatId{run.value(0).toLongLong()};
    if (!run.value(1).toBool()) {
      return d_->fail(StoreError::NotFound,
                      QStringLiteral("The branch at message %1 cannot be restored: the message "
                                     "it followed was deleted since.")
                          .arg(raw(message)));
    }
  }
  if (!detail::touch_chat(*d_, chat, d_->now_ms(), true)) return false;
  {
    // Parents first, so each row's parent exists when it is added.
    detail::Run run(d_->sql(), QStringLiteral("INSERT INTO messages (%1) SELECT %1"
                                              " FROM deleted_messages WHERE branch = ?"
                                              " ORDER BY position")
                                   .arg(kRowColumns));
    run << raw(message);
    if (!run.exec()) return d_->fail_sql(QStringLiteral("restore a branch"), run.error());
  }
  {
    detail::Run run(d_->sql(), QStringLiteral("DELETE FROM deleted_messages WHERE branch = ?"));
    run << raw(message);
    if (!run.exec()) return d_->fail_sql(QStringLiteral("restore a branch"), run.error());
  }
  if (!detail::commit(*d_, transaction)) return false;
  d_->succeed();
  emit chat_changed(chat);
  return true;
}

}  // namespace quire::store
