#pragma once

#include <QElapsedTimer>
#include <QHash>
#include <QList>
#include <QSet>
#include <QWidget>
#include <optional>
#include <vector>

#include "quire/ui/chat_view_data.h"

class QAction;
class QLabel;
class QScrollArea;
class QStackedWidget;
class QTimer;
class QToolButton;
class QVBoxLayout;

namespace quire::ui {

class BranchUndoBar;
class MessageWidget;

// The conversation of one chat: user messages as bubbles, replies as Markdown
// blocks with a Copy button per code block, per-message actions (copy, edit and
// resend, regenerate), streaming, errors, and an empty state for a new chat.
// A chat is a tree of messages and the view shows one path through it: a
// message with other versions carries a "‹ 2/3 ›" switcher, any message can
// start a new chat ("Branch"), and a version can be deleted with an Undo bar
// above the conversation.
//
// Design: a scroll area holding one widget per message, built lazily, rather
// than a QListView with a painting delegate. Every message needs live content:
// selection with mouse and keyboard, links, a Copy button per code block and
// inline editing; a delegate only paints, so each of these would have to be
// re-implemented over it. The cost of widgets is bounded instead: only the
// newest kInitialBatch messages get widgets when a chat is opened, and older
// ones are built kHistoryBatch at a time when the user scrolls near the top,
// with the messages in view kept in place; back at the end, they are released
// again. Streaming re-renders only the last paragraph or code block of one
// message, at most kMaxRendersPerSecond times a second.
//
// Object names (for tests and accessibility tools): "message" per message
// (property "messageId"), "messageText", "codeBlock", "copyCodeButton",
// "copyMessageButton", "editButton", "messageEditor", "sendEditButton",
// "regenerateButton", "messageError", "messageStats", "emptyState",
// "jumpToLatestButton", "branchSwitcher" (see branch_switcher.h),
// "branchButton", "deleteBranchButton", "branchUndoBar", "branchUndoButton",
// and per tool call of a reply the names tool_call_card.h lists.
//
// Tool calls: a reply's calls (ChatMessageView::toolCalls) show as cards
// under its text. A call waiting for approval offers Allow once, Always allow
// in this chat and Deny, answered through toolCallDecided; a running call
// offers Stop (toolCallCancelRequested). The app then reports each change of
// a call through updateToolCall, which touches that one card only.
class ChatView : public QWidget {
  Q_OBJECT

 public:
  static constexpr int kMaxRendersPerSecond = 20;
  static constexpr int kInitialBatch = 40;
  static constexpr int kHistoryBatch = 30;

  explicit ChatView(QWidget* parent = nullptr);
  ~ChatView() override;

  // Replaces the conversation (opening a chat) and scrolls to its end.
  void setMessages(const QList<ChatMessageView>& messages);
  void appendMessage(const ChatMessageView& message);
  // Replaces the message with the same id and renders it at once (end of a
  // stream, stats, an error). Unknown ids are ignored.
  void updateMessage(const ChatMessageView& message);
  // Appends streamed text. Deltas are coalesced: the message is rendered again
  // at most kMaxRendersPerSecond times a second, however many deltas arrive.
  void appendToMessage(qint64 id, const QString& delta);
  void removeMessage(qint64 id);
  void clear();
  // Shows one tool call of message `messageId` as it stands now: its card is
  // updated in place (or added, for a call id the message lacks) without
  // rendering the message or the conversation again. Unknown messages are
  // ignored.
  void updateToolCall(qint64 messageId, const ToolCallView& call);

  qsizetype messageCount() const { return messages_.size(); }
  std::optional<ChatMessageView> message(qint64 id) const;
  // Messages that have widgets so far: always the newest ones.
  qsizetype builtMessageCount() const { return messages_.size() - firstBuilt_; }
  bool isShowingEmptyState() const;
  // True while the view follows new text; false once the user scrolled up.
  bool isPinnedToBottom() const { return pinned_; }
  // How many times a message was rendered, built or re-rendered: lets tests
  // and diagnostics see the coalescing of streamed text.
  int renderCount() const { return renderCount_; }
  void setEmptyStateText(const QString& title, const QString& hint);

  // The Undo bar for the branch starting at message `id`, just deleted.
  void offerBranchUndo(qint64 id);
  void dismissBranchUndo();
  bool isBranchUndoVisible() const;
  void setBranchUndoTimeout(int milliseconds);
  // Off while the chat generates: the switchers are disabled and Delete is
  // not offered, since the reply streams into the path on show.
  void setBranchSwitchingEnabled(bool enabled);
  bool isBranchSwitchingEnabled() const { return branchSwitching_; }

  // Keyboard actions on the conversation's end, for the app's menus, with
  // window-wide shortcuts (chat_view_keys.cpp): "Regenerate reply" (Ctrl+R)
  // asks for the last reply again when its Regenerate or Retry button is offered;
  // "Edit last message" (Ctrl+Shift+E) opens the last user message's editor;
  // "Copy last reply" (Ctrl+Shift+C) copies the last finished reply. Each is
  // disabled while there is nothing for it to act on.
  QAction* regenerateAction() const { return regenerateAction_; }
  QAction* editLastAction() const { return editLastAction_; }
  QAction* copyLastReplyAction() const { return copyLastReplyAction_; }

 public slots:
  void scrollToBottom();
  // Renders streamed text that is waiting for the next render slot now.
  void flushPendingRenders();

 signals:
  // A user message was edited; the app replaces the conversation from it on.
  void editRequested(qint64 id, const QString& newText);
  // The last reply should be generated again.
  void regenerateRequested(qint64 id);
  // The failed last reply `id` (canRetry) should be asked for again.
  void retryRequested(qint64 id);
  // The switcher of message `id`: -1 shows its previous version, +1 its next.
  void branchSwitchRequested(qint64 id, int step);
  // A new chat with the conversation up to message `id`.
  void branchFromHereRequested(qint64 id);
  // Message `id` and everything below it go; the other versions stay.
  void deleteBranchRequested(qint64 id);
  // The Undo bar's button, for the branch offerBranchUndo() named.
  void undoDeleteBranchRequested(qint64 id);
  // The user's answer to tool call `callId` of reply `messageId`, which
  // waited for approval. Sent once: the card takes no second answer until
  // updateToolCall reports a new state for the call.
  void toolCallDecided(qint64 messageId, const QString& callId, quire::ui::ToolDecision decision);
  // Stop was pressed on a running call.
  void toolCallCancelRequested(qint64 messageId, const QString& callId);
  // A thumbnail of message `messageId` was clicked: image `index` of it.
  void imageOpenRequested(qint64 messageId, int index);

 protected:
  void resizeEvent(QResizeEvent* event) override;
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  std::optional<qsizetype> indexOf(qint64 id) const;
  MessageWidget* buildWidget(qsizetype index);
  void buildOlder();
  void queueBuildOlder();
  void releaseOlder();
  void queueReleaseOlder();
  void discardWidgets();
  void reindex();
  void scheduleRender();
  void refreshActions();
  void buildKeyboardActions();
  void refreshKeyboardActions();
  std::optional<qsizetype> lastIndexOf(ChatMessageView::Role role) const;
  bool lastReplyCanRegenerate() const;
  bool lastReplyCanRetry() const;
  void regenerateLast();
  void editLast();
  void copyLastReply();
  void refreshEmptyState();
  void placeJumpButton();
  void onScrollValueChanged(int value);
  void onScrollRangeChanged(int minimum, int maximum);

  QList<ChatMessageView> messages_;
  // Parallel to messages_; null below firstBuilt_.
  std::vector<MessageWidget*> widgets_;
  qsizetype firstBuilt_ = 0;
  QHash<qint64, qsizetype> indexById_;

  QSet<qint64> dirty_;
  QTimer* renderTimer_ = nullptr;
  QElapsedTimer sinceRender_;
  int renderCount_ = 0;

  bool pinned_ = true;
  bool branchSwitching_ = true;
  bool adjustingScroll_ = false;
  bool buildOlderQueued_ = false;
  bool releaseQueued_ = false;
  // After older messages were inserted above: keep this distance to the end,
  // so that the messages in view stay put, until the user scrolls.
  std::optional<int> keepFromBottom_;

  QStackedWidget* stack_ = nullptr;
  QWidget* emptyState_ = nullptr;
  QLabel* emptyTitle_ = nullptr;
  QLabel* emptyHint_ = nullptr;
  QScrollArea* scroll_ = nullptr;
  QWidget* content_ = nullptr;
  QVBoxLayout* column_ = nullptr;
  QToolButton* jumpButton_ = nullptr;
  BranchUndoBar* branchUndo_ = nullptr;
  QAction* regenerateAction_ = nullptr;
  QAction* editLastAction_ = nullptr;
  QAction* copyLastReplyAction_ = nullptr;
};

}  // namespace quire::ui
