#pragma once

#include <QWidget>
#include <functional>
#include <optional>

#include "quire/ui/chat_list_roles.h"

class QAbstractItemModel;
class QAction;
class QLabel;
class QLineEdit;
class QListView;
class QModelIndex;
class QPushButton;
class QTimer;
class QToolButton;

namespace quire::ui {

class ChatListDelegate;
class ChatListProxy;
class TintedFrame;

// The sidebar of chats over a model that the app owns (roles: ChatListRole).
// Chats are listed newest first. The search field filters titles here at once
// and, a moment after typing stops, emits searchChanged so that the app can
// search message text in its store and answer with setTextMatches. Matches
// are dropped whenever the search text changes, so a stale answer never shows.
//
// The widget changes nothing itself: new, rename, delete and undo go out as
// signals and the app updates its model. A deleted chat gets an Undo bar for
// undoTimeout() ms; when it closes unused, deleteCommitted says the deletion
// is final. Keys, anywhere in the widget's window: Ctrl+N new chat, F2 rename
// and Delete delete the current chat. A text field that has focus keeps
// Delete for its text (Qt lets an editor claim the key first). The actions
// are exposed for the app's menus.
//
// Object names: "newChatButton", "chatSearch", "chatListView", "renameEditor",
// "undoBar", "undoLabel", "undoButton", "emptyListLabel".
class ChatListWidget : public QWidget {
  Q_OBJECT

 public:
  static constexpr int kDefaultUndoTimeoutMs = 6000;
  static constexpr int kSearchDelayMs = 150;

  explicit ChatListWidget(QWidget* parent = nullptr);
  ~ChatListWidget() override;

  // The app's model; not owned. May be null.
  void setModel(QAbstractItemModel* model);
  QAbstractItemModel* model() const;
  // What the list shows: sorted and filtered over model().
  QAbstractItemModel* viewModel() const;

  QString searchText() const;
  std::optional<qint64> currentChatId() const { return currentId_; }
  int undoTimeout() const { return undoTimeoutMs_; }
  void setUndoTimeout(int milliseconds) { undoTimeoutMs_ = milliseconds; }
  bool isUndoVisible() const;

  QAction* newChatAction() const { return newAction_; }
  QAction* renameAction() const { return renameAction_; }
  QAction* deleteAction() const { return deleteAction_; }
  // Adds the app's actions on the current chat (export) to the chat's
  // context menu, after Rename and Delete.
  void addChatActions(const QList<QAction*>& actions);
  // "Search chats" (Ctrl+F, window-wide): focuses the search field with its
  // text selected.
  QAction* searchAction() const { return searchAction_; }

 public slots:
  // Selects the chat without emitting chatSelected (the app chose it).
  void setCurrentChat(qint64 id);
  // Selects nothing (the app shows a new chat, not yet in the list), so that
  // a click on any chat opens it.
  void clearCurrentChat();
  void setSearchText(const QString& text);
  // The app's answer to searchChanged(text): chats whose messages contain
  // `text`. Ignored when the search has moved on to another text meanwhile.
  void setTextMatches(const QString& text, const QList<qint64>& ids);
  void renameCurrent();
  void deleteCurrent();

 signals:
  void chatSelected(qint64 id);
  void newChatRequested();
  void renameRequested(qint64 id, const QString& title);
  void deleteRequested(qint64 id);
  void undoDeleteRequested(qint64 id);
  void deleteCommitted(qint64 id);
  void searchChanged(const QString& text);

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  void onCurrentChanged(const QModelIndex& current);
  void onRenameCommitted(const QModelIndex& index, const QString& title);
  void onSearchEdited(const QString& text);
  void refilter(const std::function<void()>& change);
  void showUndo(qint64 id, const QString& title);
  // Fits the deleted chat's title into the undo bar, whole in its tooltip.
  void elideUndoTitle();
  void commitPendingDelete();
  void undoDelete();
  void refreshEmptyLabel();

  ChatListProxy* proxy_ = nullptr;
  ChatListDelegate* delegate_ = nullptr;
  QPushButton* newButton_ = nullptr;
  QLineEdit* search_ = nullptr;
  QAction* searchAction_ = nullptr;
  QListView* view_ = nullptr;
  QLabel* emptyLabel_ = nullptr;
  TintedFrame* undoBar_ = nullptr;
  QLabel* undoLabel_ = nullptr;
  QString undoTitle_;
  QToolButton* undoButton_ = nullptr;
  QTimer* undoTimer_ = nullptr;
  QTimer* searchTimer_ = nullptr;
  QAction* newAction_ = nullptr;
  QAction* renameAction_ = nullptr;
  QAction* deleteAction_ = nullptr;

  std::optional<qint64> currentId_;
  std::optional<qint64> pendingDelete_;
  int undoTimeoutMs_ = kDefaultUndoTimeoutMs;
  // Set while the list changes under the selection (filtering, app-driven
  // selection): the view moves its current row then, but the user did not.
  bool quietSelection_ = false;
};

}  // namespace quire::ui
