#pragma once

// The tool calls of the chats, between the model's replies, the user's
// approval and the tool servers. A reply's calls are stored with it and
// shown as cards; each waits for the user (Allow once, Always allow in this
// chat, Deny) unless the chat already allows that tool always; an allowed
// call runs on its server, and what happened to it (its result, a denial, a
// failure, a timeout) is stored as a tool message the model reads. Once
// every call of a reply has its result, the chat goes on: the model replies
// to the results. Nothing runs a tool but the user's decision, and a tool
// server's trouble is a result like any other, never the chat's end.

#include <QByteArray>
#include <QList>
#include <QObject>
#include <QPointer>
#include <QString>
#include <map>

#include "quire/app/store/chat_store.h"
#include "quire/ui/chat_view_data.h"

namespace quire::tools {
class ToolServers;
class ToolCall;
struct ToolCallResult;
}  // namespace quire::tools
namespace quire::ui {
class ChatView;
}

namespace quire::gui {

class ChatToolCalls : public QObject {
  Q_OBJECT

 public:
  // The text the model reads for a call the user refused.
  static QString deniedText();
  // Replies after one user message whose calls an "always allow" runs
  // without asking; later ones wait for the user.
  static constexpr int kMaxRoundsAlone = 8;

  ChatToolCalls(store::ChatStore& store, ui::ChatView& view, QObject* parent = nullptr);
  ~ChatToolCalls() override;

  // The tool servers whose tools the chats offer; null offers none.
  void setServers(tools::ToolServers* servers) { servers_ = servers; }
  // Whether chats that say nothing themselves use tools (Chat settings'
  // default).
  void setToolsByDefault(bool on) { tools_by_default_ = on; }

  // The tools `chat`'s next reply may call, as OpenAI's function list (JSON
  // text); empty when the chat has tools off or no server is ready.
  QByteArray toolsFor(store::ChatId chat) const;

  // The reply `reply` of `chat` made `calls` (ids and names as the model
  // wrote them): they are stored with it, and each waits for the user or,
  // when the chat always allows its tool, runs.
  void callsMade(store::ChatId chat, store::MessageId reply, QList<store::ToolCall> calls);

  // Calls of `chat` still waiting for the user or running end as cancelled
  // (the user went on without them), so that the conversation stays whole.
  void settle(store::ChatId chat);
  // Whether a call of `chat` waits for the user or runs.
  bool busy(store::ChatId chat) const;

  // The cards of a reply's calls: each call with what the path's tool
  // messages say happened to it, or its live state.
  QList<ui::ToolCallView> viewsOf(const store::Message& reply,
                                  const QList<store::Message>& path) const;

 public slots:
  void decide(qint64 message_id, const QString& call_id, quire::ui::ToolDecision decision);
  void cancel(qint64 message_id, const QString& call_id);

 signals:
  // Every call of the last reply of `chat` has its result: the model goes on.
  void resultsReady(quire::store::ChatId chat);
  // The store failed; the text says what could not be saved.
  void problem(const QString& text);

 private:
  struct Pending {
    store::ChatId chat{};
    store::MessageId reply{};
    store::ToolCall call;
    ui::ToolCallView::State state = ui::ToolCallView::State::AwaitingApproval;
    QPointer<tools::ToolCall> running;
  };

  static QString keyOf(store::MessageId reply, const QString& call_id);
  // "server/tool", the key of "always allow" in the chat's settings.
  static QString toolKey(const store::ToolCall& call);
  bool alwaysAllowed(store::ChatId chat, const store::ToolCall& call) const;
  void run(const QString& key);
  void finish(const QString& key, store::ToolStatus status, const QString& text,
              const QString& summary);
  void show(const Pending& pending, const QString& result, const QString& summary) const;

  store::ChatStore& store_;
  ui::ChatView& view_;
  tools::ToolServers* servers_ = nullptr;
  bool tools_by_default_ = true;
  std::map<QString, Pending> pending_;  // by keyOf(reply, call id)
};

}  // namespace quire::gui
