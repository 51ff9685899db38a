#include "chat_test_support.h"

#include "document_view.h"
#include "message_widget.h"
#include "quire/ui/chat_view.h"

namespace quire::ui::testing {

ChatMessageView userMessage(qint64 id, const QString& text) {
  ChatMessageView message;
  message.id = id;
  message.role = ChatMessageView::Role::User;
  message.text = text;
  return message;
}

ChatMessageView assistantMessage(qint64 id, const QString& text, const QString& stats) {
  ChatMessageView message;
  message.id = id;
  message.role = ChatMessageView::Role::Assistant;
  message.text = text;
  message.stats = stats;
  return message;
}

MessageWidget* messageWidget(const ChatView& view, qint64 id) {
  for (MessageWidget* widget : view.findChildren<MessageWidget*>()) {
    if (widget->id() == id) return widget;
  }
  return nullptr;
}

DocumentView* firstText(const MessageWidget* message) {
  return message ? message->findChild<DocumentView*>(QStringLiteral("messageText")) : nullptr;
}

QList<ChatMessageView> longConversation(int count) {
  QList<ChatMessageView> messages;
  for (int i = 1; i <= count; ++i) {
    if (i % 2 == 1) {
      messages.push_back(userMessage(i, QStringLiteral("Question %1: what comes next?").arg(i)));
    } else {
      messages.push_back(assistantMessage(
          i, QStringLiteral("Answer %1.\n\n- a point\n- another point\n\nA closing line.").arg(i)));
    }
  }
  return messages;
}

QList<ChatMessageView> sampleConversation() {
  return {
      userMessage(1, QStringLiteral("How do I read a JSON file in Python and print one field?")),
      assistantMessage(
          2,
          QStringLiteral(
              "Use the standard library's **json** module: it parses the file into "
              "dictionaries and lists.\n\n"
              "```python\n"
              "import json\n\n"
              "with open(\"config.json\", encoding=\"utf-8\") as f:\n"
              "    config = json.load(f)\n\n"
              "print(config[\"name\"])\n"
              "```\n\n"
              "### Notes\n\n"
              "- `json.load` reads from an open file, `json.loads` from a string.\n"
              "- A missing key raises `KeyError`; use `config.get(\"name\")` to get `None` "
              "instead.\n"),
          QStringLiteral("118 tokens · 41.7 tok/s · 0.21 s to first token · 256 reused")),
      userMessage(3, QStringLiteral("And if the file might not exist?")),
      assistantMessage(
          4,
          QStringLiteral("Catch `FileNotFoundError` around the `open` call, or check first with "
                         "`pathlib.Path(\"config.json\").exists()`. Catching is the safer of the "
                         "two: the file can disappear between the check and the open."),
          QStringLiteral("52 tokens · 43.0 tok/s · 0.09 s to first token · 1,024 reused")),
  };
}

}  // namespace quire::ui::testing
