#pragma once

// The messages of one chat's current path, as a chat view shows them, with
// each message's place among its siblings for a "< 2/3 >" switcher. It
// follows the store: a streamed reply changes its row, switching branches
// replaces only the rows below the branch point.

#include <QAbstractListModel>
#include <QList>
#include <QPointer>
#include <optional>

#include "quire/app/store/chat_store.h"

namespace quire::store {

class ChatPathModel : public QAbstractListModel {
  Q_OBJECT

 public:
  enum Roles {
    IdRole = Qt::UserRole + 1,  // qint64
    RoleRole,                   // QString: "system", "user", "assistant"
    TextRole,                   // QString (also Qt::DisplayRole)
    SiblingIndexRole,           // int, from 0
    SiblingCountRole,           // int, 1 when the message has no siblings
  };

  explicit ChatPathModel(ChatStore* store, QObject* parent = nullptr);

  // The chat shown; nullopt shows nothing.
  void set_chat(std::optional<ChatId> chat);
  std::optional<ChatId> chat() const { return chat_; }
  // The message on `row`, or nullopt.
  std::optional<MessageId> message_at(int row) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QHash<int, QByteArray> roleNames() const override;

 private:
  struct Row {
    Message message;
    Siblings siblings;
    bool operator==(const Row&) const = default;
  };
  QList<Row> load() const;
  void refresh();

  QPointer<ChatStore> store_;
  std::optional<ChatId> chat_;
  QList<Row> rows_;
};

}  // namespace quire::store
