// ChatView's keyboard actions: what the buttons under the conversation's last
// messages do, reachable without the mouse. They act on the same widgets the
// buttons belong to, so a key and a click cannot disagree.

#include <QAction>
#include <QKeySequence>
#include <QScrollArea>

#include "message_widget.h"
#include "quire/ui/chat_view.h"

namespace quire::ui {

void ChatView::buildKeyboardActions() {
  const auto make = [this](const QString& text, const char* name, const QKeySequence& keys,
                           const QString& tip) {
    auto* action = new QAction(text, this);
    action->setObjectName(QString::fromLatin1(name));
    action->setShortcut(keys);
    // Window-wide, like the window's menus: the keys work wherever focus is,
    // the message box included.
    action->setShortcutContext(Qt::WindowShortcut);
    action->setToolTip(tip);
    action->setEnabled(false);
    addAction(action);
    return action;
  };
  regenerateAction_ = make(tr("&Regenerate reply"), "regenerateReplyAction",
                           QKeySequence(Qt::CTRL | Qt::Key_R), tr("Generate the last reply again"));
  editLastAction_ = make(tr("&Edit last message"), "editLastMessageAction",
                         QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_E),
                         tr("Edit your last message and resend it"));
  copyLastReplyAction_ =
      make(tr("&Copy last reply"), "copyLastReplyAction",
           QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_C), tr("Copy the last reply's text"));
  connect(regenerateAction_, &QAction::triggered, this, &ChatView::regenerateLast);
  connect(editLastAction_, &QAction::triggered, this, &ChatView::editLast);
  connect(copyLastReplyAction_, &QAction::triggered, this, &ChatView::copyLastReply);
}

std::optional<qsizetype> ChatView::lastIndexOf(ChatMessageView::Role role) const {
  for (qsizetype i = messages_.size() - 1; i >= 0; --i) {
    if (messages_[i].role == role) return i;
  }
  return std::nullopt;
}

bool ChatView::lastReplyCanRegenerate() const {
  // The last message only: regenerating an older reply would orphan what follows.
  if (messages_.isEmpty()) return false;
  const ChatMessageView& last = messages_.constLast();
  return last.role == ChatMessageView::Role::Assistant && !last.streaming && last.canRegenerate;
}

bool ChatView::lastReplyCanRetry() const {
  if (messages_.isEmpty()) return false;
  const ChatMessageView& last = messages_.constLast();
  return last.role == ChatMessageView::Role::Assistant && !last.streaming && last.canRetry;
}

void ChatView::refreshKeyboardActions() {
  regenerateAction_->setEnabled(lastReplyCanRegenerate() || lastReplyCanRetry());
  editLastAction_->setEnabled(lastIndexOf(ChatMessageView::Role::User).has_value());
  const std::optional<qsizetype> reply = lastIndexOf(ChatMessageView::Role::Assistant);
  copyLastReplyAction_->setEnabled(reply && !messages_[*reply].streaming &&
                                   !messages_[*reply].text.isEmpty());
}

void ChatView::regenerateLast() {
  // A failed reply that can be retried is asked for again, as its Retry does.
  if (lastReplyCanRetry()) {
    emit retryRequested(messages_.constLast().id);
  } else if (lastReplyCanRegenerate()) {
    emit regenerateRequested(messages_.constLast().id);
  }
}

void ChatView::editLast() {
  const std::optional<qsizetype> index = lastIndexOf(ChatMessageView::Role::User);
  if (!index) return;
  // The newest messages always have widgets; the last user message is among them.
  MessageWidget* widget = widgets_[static_cast<std::size_t>(*index)];
  if (widget == nullptr) return;
  scroll_->ensureWidgetVisible(widget);
  widget->startEditing();
}

void ChatView::copyLastReply() {
  const std::optional<qsizetype> index = lastIndexOf(ChatMessageView::Role::Assistant);
  if (!index || messages_[*index].streaming) return;
  if (MessageWidget* widget = widgets_[static_cast<std::size_t>(*index)]) widget->copyMessage();
}

}  // namespace quire::ui
