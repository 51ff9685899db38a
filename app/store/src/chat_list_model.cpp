#include "quire/app/store/chat_list_model.h"

namespace quire::store {
namespace {

// The store's order: most recent activity first, then the newest chat.
bool before(const ChatSummary& a, const ChatSummary& b) {
  if (a.updated != b.updated) return a.updated > b.updated;
  return raw(a.id) > raw(b.id);
}

}  // namespace

ChatListModel::ChatListModel(ChatStore* store, QObject* parent)
    : QAbstractListModel(parent), store_(store) {
  if (store_ != nullptr) {
    connect(store_, &ChatStore::chats_reset, this, &ChatListModel::reload);
    connect(store_, &ChatStore::chat_added, this, &ChatListModel::on_added);
    connect(store_, &ChatStore::chat_changed, this, &ChatListModel::on_changed);
    connect(store_, &ChatStore::chat_removed, this, &ChatListModel::on_removed);
  }
  reload();
}

int ChatListModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(chats_.size());
}

QVariant ChatListModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) {
    return {};
  }
  const ChatSummary& chat = chats_.at(index.row());
  switch (role) {
    case Qt::DisplayRole:
    case Qt::EditRole:
    case TitleRole:
      return chat.title;
    case IdRole:
      return raw(chat.id);
    case LastActivityRole:
      return chat.updated;
    case MessageCountRole:
      return chat.message_count;
    case ModelDirRole:
      return chat.model.model_dir;
    default:
      return {};
  }
}

bool ChatListModel::setData(const QModelIndex& index, const QVariant& value, int role) {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid) ||
      (role != Qt::EditRole && role != TitleRole) || store_ == nullptr) {
    return false;
  }
  // The store's chat_changed signal updates the row.
  return store_->rename_chat(chats_.at(index.row()).id, value.toString());
}

Qt::ItemFlags ChatListModel::flags(const QModelIndex& index) const {
  const Qt::ItemFlags base = QAbstractListModel::flags(index);
  return index.isValid() ? base | Qt::ItemIsEditable : base;
}

QHash<int, QByteArray> ChatListModel::roleNames() const {
  QHash<int, QByteArray> names = QAbstractListModel::roleNames();
  names.insert(IdRole, "chatId");
  names.insert(TitleRole, "title");
  names.insert(LastActivityRole, "lastActivity");
  names.insert(MessageCountRole, "messageCount");
  names.insert(ModelDirRole, "modelDir");
  return names;
}

std::optional<ChatId> ChatListModel::chat_at(int row) const {
  if (row < 0 || row >= chats_.size()) return std::nullopt;
  return chats_.at(row).id;
}

int ChatListModel::row_of(ChatId chat) const {
  for (int row = 0; row < chats_.size(); ++row) {
    if (chats_.at(row).id == chat) return row;
  }
  return -1;
}

void ChatListModel::reload() {
  beginResetModel();
  chats_ = (store_ != nullptr && store_->is_open()) ? store_->list_chats() : QList<ChatSummary>();
  endResetModel();
}

int ChatListModel::sorted_row(const ChatSummary& chat, int skip) const {
  int row = 0;
  for (int i = 0; i < chats_.size(); ++i) {
    if (i != skip && before(chats_.at(i), chat)) ++row;
  }
  return row;
}

void ChatListModel::on_added(ChatId chat) {
  if (row_of(chat) >= 0) {
    on_changed(chat);
    return;
  }
  const auto summary = store_->chat(chat);
  if (!summary || summary->deleted) return;
  const int row = sorted_row(*summary, -1);
  beginInsertRows({}, row, row);
  chats_.insert(row, *summary);
  endInsertRows();
}

void ChatListModel::on_changed(ChatId chat) {
  const int row = row_of(chat);
  if (row < 0) return;
  const auto summary = store_->chat(chat);
  if (!summary || summary->deleted) {
    on_removed(chat);
    return;
  }
  const int target = sorted_row(*summary, row);
  if (target != row) {
    // Qt counts the destination among the rows before the move.
    beginMoveRows({}, row, row, {}, target > row ? target + 1 : target);
    chats_.move(row, target);
    endMoveRows();
  }
  chats_[target] = *summary;
  const QModelIndex changed = index(target);
  emit dataChanged(changed, changed);
}

void ChatListModel::on_removed(ChatId chat) {
  const int row = row_of(chat);
  if (row < 0) return;
  beginRemoveRows({}, row, row);
  chats_.removeAt(row);
  endRemoveRows();
}

}  // namespace quire::store
