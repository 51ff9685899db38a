#pragma once

// The sidebar's list of chats: live chats, most recent activity first. It
// follows the store's signals with fine-grained row inserts, moves, changes
// and removals, so a view keeps its selection and scroll position.

#include <QAbstractListModel>
#include <QList>
#include <QPointer>

#include "quire/app/store/chat_store.h"

namespace quire::store {

class ChatListModel : public QAbstractListModel {
  Q_OBJECT

 public:
  // IdRole and LastActivityRole have the values of ui::ChatIdRole and
  // ui::ChatLastActivityRole, so the sidebar widget reads this model directly.
  enum Roles {
    IdRole = Qt::UserRole + 1,            // qint64
    LastActivityRole = Qt::UserRole + 2,  // QDateTime (UTC)
    TitleRole,                            // QString
    MessageCountRole,                     // int
    ModelDirRole,                         // QString
  };

  explicit ChatListModel(ChatStore* store, QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  // Titles are editable in place; an edit renames the chat in the store.
  bool setData(const QModelIndex& index, const QVariant& value, int role = Qt::EditRole) override;
  Qt::ItemFlags flags(const QModelIndex& index) const override;
  QHash<int, QByteArray> roleNames() const override;

  // The chat on `row`, or nullopt; the row of `chat`, or -1.
  std::optional<ChatId> chat_at(int row) const;
  int row_of(ChatId chat) const;

 private:
  void reload();
  void on_added(ChatId chat);
  void on_changed(ChatId chat);
  void on_removed(ChatId chat);
  // Where `chat` belongs in the order, counted among the rows other than `skip`.
  int sorted_row(const ChatSummary& chat, int skip) const;

  QPointer<ChatStore> store_;
  QList<ChatSummary> chats_;
};

}  // namespace quire::store
