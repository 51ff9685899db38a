#include "chat_list_proxy.h"

#include <QDateTime>

#include "quire/ui/chat_list_roles.h"

namespace quire::ui {

ChatListProxy::ChatListProxy(QObject* parent) : QSortFilterProxyModel(parent) {
  setDynamicSortFilter(true);
  setSortRole(ChatLastActivityRole);
  sort(0, Qt::DescendingOrder);
}

void ChatListProxy::setSearchText(const QString& text) {
  const QString trimmed = text.trimmed();
  if (trimmed == searchText_) return;
  searchText_ = trimmed;
  // Matches found for another text no longer apply; the app sends fresh ones.
  textMatches_.clear();
  invalidateFilter();
}

void ChatListProxy::setTextMatches(const QSet<qint64>& ids) {
  if (ids == textMatches_) return;
  textMatches_ = ids;
  invalidateFilter();
}

Qt::ItemFlags ChatListProxy::flags(const QModelIndex& index) const {
  Qt::ItemFlags flags = QSortFilterProxyModel::flags(index);
  if (index.isValid()) flags |= Qt::ItemIsEditable;
  return flags;
}

bool ChatListProxy::filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const {
  if (searchText_.isEmpty()) return true;
  const QModelIndex index = sourceModel()->index(sourceRow, 0, sourceParent);
  if (index.data(Qt::DisplayRole).toString().contains(searchText_, Qt::CaseInsensitive))
    return true;
  return textMatches_.contains(index.data(ChatIdRole).toLongLong());
}

bool ChatListProxy::lessThan(const QModelIndex& left, const QModelIndex& right) const {
  // Chats without a time sort as oldest; equal times keep the model's order
  // (the sort is stable).
  const QDateTime a = left.data(ChatLastActivityRole).toDateTime();
  const QDateTime b = right.data(ChatLastActivityRole).toDateTime();
  if (!a.isValid()) return b.isValid();
  if (!b.isValid()) return false;
  return a < b;
}

}  // namespace quire::ui
