#pragma once

#include <Qt>

namespace quire::ui {

// Roles that the app's chat list model implements for ChatListWidget, one row
// per chat in column 0. Qt::DisplayRole is the chat's title.
enum ChatListRole : int {
  // qint64: the chat's id in the store, passed back in every signal.
  ChatIdRole = Qt::UserRole + 1,
  // QDateTime: when the chat last changed; newest chats are listed first.
  ChatLastActivityRole = Qt::UserRole + 2,
};

}  // namespace quire::ui
