// The preset a chat's settings came from: one nullable column, NULL for none.
// Only a name: the values themselves are the chat's settings, copied when the
// preset was chosen, so that editing or deleting the preset changes no chat.

#include "chat_store_impl.h"

namespace quire::store {

std::optional<QString> ChatStore::chat_preset(ChatId chat) const {
  if (!d_->require_open()) return std::nullopt;
  detail::Run run(d_->sql(), QStringLiteral("SELECT preset FROM chats WHERE id = ?"));
  run << raw(chat);
  if (!run.exec()) {
    d_->fail_sql(QStringLiteral("read a chat's preset"), run.error());
    return std::nullopt;
  }
  if (!run.next()) {
    d_->fail(StoreError::NotFound, QStringLiteral("There is no chat %1.").arg(raw(chat)));
    return std::nullopt;
  }
  d_->succeed();
  if (run.value(0).isNull()) return std::nullopt;
  return run.value(0).toString();
}

bool ChatStore::set_chat_preset(ChatId chat, const std::optional<QString>& preset) {
  if (!d_->require_open()) return false;
  detail::Run run(d_->sql(), QStringLiteral("UPDATE chats SET preset = ? WHERE id = ?"));
  run << (preset ? QVariant(*preset) : QVariant(QMetaType::fromType<QString>())) << raw(chat);
  if (!run.exec()) return d_->fail_sql(QStringLiteral("save a chat's preset"), run.error());
  if (run.rows_affected() == 0) {
    return d_->fail(StoreError::NotFound, QStringLiteral("There is no chat %1.").arg(raw(chat)));
  }
  d_->succeed();
  emit chat_changed(chat);
  return true;
}

}  // namespace quire::store
