#pragma once

#include <QSet>
#include <QSortFilterProxyModel>

namespace quire::ui {

// The chat list as shown: newest activity first, filtered by the search text.
// A chat stays in view when its title contains the text (checked here), or when
// the app reported that its messages do (setTextMatches, answered from the
// app's store). Every row is offered as editable, so the list can rename in
// place even over a read-only model; the new title goes out as a signal and
// never into the model (setData is not used).
class ChatListProxy : public QSortFilterProxyModel {
  Q_OBJECT

 public:
  explicit ChatListProxy(QObject* parent = nullptr);

  QString searchText() const { return searchText_; }
  void setSearchText(const QString& text);
  // Chats whose messages contain searchText(); cleared when the text changes.
  void setTextMatches(const QSet<qint64>& ids);

  Qt::ItemFlags flags(const QModelIndex& index) const override;

 protected:
  bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;
  bool lessThan(const QModelIndex& left, const QModelIndex& right) const override;

 private:
  QString searchText_;
  QSet<qint64> textMatches_;
};

}  // namespace quire::ui
