#pragma once

// Helpers shared by the chat widget suites: message builders, lookups by
// object name, and a realistic conversation for screenshots.

#include <QList>
#include <QString>
#include <QWidget>

#include "quire/ui/chat_view_data.h"

namespace quire::ui {
class ChatView;
class DocumentView;
class MessageWidget;
}  // namespace quire::ui

namespace quire::ui::testing {

ChatMessageView userMessage(qint64 id, const QString& text);
ChatMessageView assistantMessage(qint64 id, const QString& text, const QString& stats = {});

// The widget showing message `id`, or null when it has not been built.
MessageWidget* messageWidget(const ChatView& view, qint64 id);

// The first text view of a message: its whole text, or its first paragraphs.
DocumentView* firstText(const MessageWidget* message);

// A child with this object name that is not hidden relative to `parent`.
template <typename T>
T* visibleChild(const QWidget* parent, const QString& name) {
  for (T* child : parent->findChildren<T*>(name)) {
    if (child->isVisibleTo(parent)) return child;
  }
  return nullptr;
}

// `count` alternating user and assistant messages, ids 1..count, each a few
// lines long so that the conversation is many screens tall.
QList<ChatMessageView> longConversation(int count);

// Four messages as a user would see them: a question, a reply with a heading,
// a list and a code block, a follow-up, and a short reply with statistics.
QList<ChatMessageView> sampleConversation();

}  // namespace quire::ui::testing
