#include "quire/app/store/chat_path_model.h"

namespace quire::store {

ChatPathModel::ChatPathModel(ChatStore* store, QObject* parent)
    : QAbstractListModel(parent), store_(store) {
  if (store_ != nullptr) {
    connect(store_, &ChatStore::chats_reset, this, &ChatPathModel::refresh);
    connect(store_, &ChatStore::chat_changed, this, [this](ChatId chat) {
      if (chat_ == chat) refresh();
    });
  }
}

void ChatPathModel::set_chat(std::optional<ChatId> chat) {
  if (chat == chat_) return;
  beginResetModel();
  chat_ = chat;
  rows_ = load();
  endResetModel();
}

std::optional<MessageId> ChatPathModel::message_at(int row) const {
  if (row < 0 || row >= rows_.size()) return std::nullopt;
  return rows_.at(row).message.id;
}

int ChatPathModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

QVariant ChatPathModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) {
    return {};
  }
  const Row& row = rows_.at(index.row());
  switch (role) {
    case Qt::DisplayRole:
    case TextRole:
      return row.message.text;
    case IdRole:
      return raw(row.message.id);
    case RoleRole:
      return role_name(row.message.role);
    case SiblingIndexRole:
      return row.siblings.index;
    case SiblingCountRole:
      return static_cast<int>(row.siblings.ids.size());
    default:
      return {};
  }
}

QHash<int, QByteArray> ChatPathModel::roleNames() const {
  QHash<int, QByteArray> names = QAbstractListModel::roleNames();
  names.insert(IdRole, "messageId");
  names.insert(RoleRole, "role");
  names.insert(TextRole, "text");
  names.insert(SiblingIndexRole, "siblingIndex");
  names.insert(SiblingCountRole, "siblingCount");
  return names;
}

QList<ChatPathModel::Row> ChatPathModel::load() const {
  QList<Row> rows;
  if (!chat_ || store_.isNull() || !store_->is_open()) return rows;
  for (const Message& message : store_->current_path(*chat_)) {
    rows << Row{message, store_->siblings(message.id).value_or(Siblings{{message.id}, 0})};
  }
  return rows;
}

// The rows the old and new paths share keep their places (changed ones are
// reported), so a view keeps its scroll position while a reply streams in.
void ChatPathModel::refresh() {
  const QList<Row> fresh = load();
  qsizetype common = 0;
  while (common < rows_.size() && common < fresh.size() &&
         rows_.at(common).message.id == fresh.at(common).message.id) {
    ++common;
  }
  if (rows_.size() > common) {
    beginRemoveRows({}, static_cast<int>(common), static_cast<int>(rows_.size() - 1));
    rows_.resize(common);
    endRemoveRows();
  }
  for (qsizetype row = 0; row < common; ++row) {
    if (rows_.at(row) == fresh.at(row)) continue;
    rows_[row] = fresh.at(row);
    const QModelIndex changed = index(static_cast<int>(row));
    emit dataChanged(changed, changed);
  }
  if (fresh.size() > common) {
    beginInsertRows({}, static_cast<int>(common), static_cast<int>(fresh.size() - 1));
    rows_.append(fresh.mid(common));
    endInsertRows();
  }
}

}  // namespace quire::store
