#include "chat_tool_calls.h"

#include <QJsonDocument>

#include "quire/tools/tool_servers.h"
#include "quire/ui/chat_view.h"

namespace quire::gui {
namespace {

using State = ui::ToolCallView::State;

State state_of(store::ToolStatus status) {
  switch (status) {
    case store::ToolStatus::Allowed:
      return State::Done;
    case store::ToolStatus::Denied:
      return State::Denied;
    case store::ToolStatus::Failed:
      return State::Failed;
    case store::ToolStatus::TimedOut:
      return State::TimedOut;
    case store::ToolStatus::Cancelled:
      return State::Cancelled;
  }
  return State::Failed;
}

store::ToolStatus status_of(const tools::ToolCallResult& result) {
  switch (result.outcome) {
    case tools::ToolCallOutcome::Finished:
      return store::ToolStatus::Allowed;
    case tools::ToolCallOutcome::TimedOut:
      return store::ToolStatus::TimedOut;
    case tools::ToolCallOutcome::Cancelled:
      return store::ToolStatus::Cancelled;
    case tools::ToolCallOutcome::Failed:
      break;
  }
  return store::ToolStatus::Failed;
}

// Spelled out for one and many: without a translation loaded, Qt's %n
// plural would print "character(s)".
QString stored_summary(const QString& text) {
  return text.size() == 1 ? QObject::tr("1 character")
                          : QObject::tr("%1 characters").arg(text.size());
}

}  // namespace

QString ChatToolCalls::deniedText() {
  return tr("The user declined to run this tool call.");
}

ChatToolCalls::ChatToolCalls(store::ChatStore& store, ui::ChatView& view, QObject* parent)
    : QObject(parent), store_(store), view_(view) {
  connect(&view_, &ui::ChatView::toolCallDecided, this, &ChatToolCalls::decide);
  connect(&view_, &ui::ChatView::toolCallCancelRequested, this, &ChatToolCalls::cancel);
}

// Calls still running are cancelled (their servers are told) when their
// handles go; nothing more is stored.
ChatToolCalls::~ChatToolCalls() {
  for (auto& [key, pending] : pending_) {
    if (pending.running) pending.running->disconnect(this);
    delete pending.running.data();
  }
}

QString ChatToolCalls::keyOf(store::MessageId reply, const QString& call_id) {
  return QString::number(store::raw(reply)) + u'/' + call_id;
}

QString ChatToolCalls::toolKey(const store::ToolCall& call) {
  return call.server + u'/' + call.name;
}

QByteArray ChatToolCalls::toolsFor(store::ChatId chat) const {
  if (servers_ == nullptr || servers_->functions().isEmpty()) return {};
  const std::optional<store::ChatSettings> own = store_.chat_settings(chat);
  const bool on = own && own->tools_enabled ? *own->tools_enabled : tools_by_default_;
  if (!on) return {};
  return QJsonDocument(servers_->functionDefinitions()).toJson(QJsonDocument::Compact);
}

bool ChatToolCalls::alwaysAllowed(store::ChatId chat, const store::ToolCall& call) const {
  const std::optional<store::ChatSettings> own = store_.chat_settings(chat);
  return own && own->always_allowed_tools.contains(toolKey(call));
}

void ChatToolCalls::callsMade(store::ChatId chat, store::MessageId reply,
                              QList<store::ToolCall> calls) {
  for (store::ToolCall& call : calls) {
    if (servers_ == nullptr) continue;
    if (const std::optional<tools::ToolFunction> function = servers_->function(call.name))
      call.server = function->server;
  }
  if (!store_.set_tool_calls(reply, calls)) {
    emit problem(tr("The reply's tool calls could not be saved: %1").arg(store_.error_string()));
  }
  // A model that calls tools again and again after one message asks the
  // user again, whatever the chat allows, so that it cannot run on alone.
  int rounds = 0;
  for (const store::Message& message : store_.current_path(chat)) {
    if (message.role == store::Role::User) rounds = 0;
    if (message.role == store::Role::Assistant && !message.tool_calls.isEmpty()) ++rounds;
  }
  const bool may_run_alone = rounds <= kMaxRoundsAlone;
  QStringList allowed;
  for (const store::ToolCall& call : calls) {
    const QString key = keyOf(reply, call.id);
    pending_[key] = Pending{chat, reply, call, State::AwaitingApproval, {}};
    if (may_run_alone && alwaysAllowed(chat, call)) {
      allowed.append(key);
    } else {
      show(pending_[key], {}, {});
    }
  }
  for (const QString& key : allowed)
    run(key);
}

bool ChatToolCalls::busy(store::ChatId chat) const {
  for (const auto& [key, pending] : pending_) {
    if (pending.chat == chat) return true;
  }
  return false;
}

void ChatToolCalls::settle(store::ChatId chat) {
  QStringList keys;
  for (const auto& [key, pending] : pending_) {
    if (pending.chat == chat) keys.append(key);
  }
  for (const QString& key : keys) {
    Pending& pending = pending_.at(key);
    if (pending.running) {
      pending.running->disconnect(this);
      pending.running->cancel(QStringLiteral("the user went on without this result"));
      pending.running->deleteLater();
    }
    // The chat goes on with the user's next message, not from these results
    // (finish() starts no reply after a cancelled call).
    finish(key, store::ToolStatus::Cancelled,
           tr("The user went on without waiting for this tool call."), tr("Not run"));
  }
}

void ChatToolCalls::decide(qint64 message_id, const QString& call_id, ui::ToolDecision decision) {
  const QString key = keyOf(store::MessageId{message_id}, call_id);
  auto found = pending_.find(key);
  if (found == pending_.end() || found->second.state != State::AwaitingApproval) return;
  if (decision == ui::ToolDecision::Deny) {
    finish(key, store::ToolStatus::Denied, deniedText(), tr("Denied"));
    return;
  }
  if (decision == ui::ToolDecision::AlwaysAllow) {
    const store::ChatId chat = found->second.chat;
    const QString tool = toolKey(found->second.call);
    store::ChatSettings settings = store_.chat_settings(chat).value_or(store::ChatSettings{});
    if (!settings.always_allowed_tools.contains(tool)) settings.always_allowed_tools.append(tool);
    if (!store_.set_chat_settings(chat, settings)) {
      emit problem(tr("“Always allow” could not be saved: %1").arg(store_.error_string()));
    }
    // Other calls of the same tool in this chat that wait run too.
    QStringList same;
    for (const auto& [other, pending] : pending_) {
      if (other != key && pending.chat == chat && pending.state == State::AwaitingApproval &&
          toolKey(pending.call) == tool) {
        same.append(other);
      }
    }
    run(key);
    for (const QString& other : same)
      run(other);
    return;
  }
  run(key);
}

void ChatToolCalls::cancel(qint64 message_id, const QString& call_id) {
  auto found = pending_.find(keyOf(store::MessageId{message_id}, call_id));
  if (found == pending_.end() || !found->second.running) return;
  // The call ends as Cancelled through its finished signal.
  found->second.running->cancel(QStringLiteral("cancelled by the user"));
}

void ChatToolCalls::run(const QString& key) {
  auto found = pending_.find(key);
  if (found == pending_.end()) return;
  Pending& pending = found->second;
  if (servers_ == nullptr) {
    finish(key, store::ToolStatus::Failed,
           tr("The tool could not run: no tool servers are set up."), tr("No tool servers"));
    return;
  }
  pending.state = State::Running;
  show(pending, {}, tr("Running…"));
  tools::ToolCall* call = servers_->call(pending.call.name, pending.call.arguments);
  pending.running = call;
  connect(call, &tools::ToolCall::finished, this,
          [this, key, call](const tools::ToolCallResult& result) {
            call->deleteLater();
            QString text = result.text;
            QString summary = result.summary;
            if (result.outcome == tools::ToolCallOutcome::Finished) {
              if (result.is_error) text = tr("The tool reported an error: %1").arg(text);
              // The card says "Done" itself: how long, and how much came back.
              summary =
                  tr("%1 s · %2")
                      .arg(QString::number(result.seconds, 'f', 1), stored_summary(result.text));
            }
            finish(key, status_of(result), text, summary);
          });
}

void ChatToolCalls::finish(const QString& key, store::ToolStatus status, const QString& text,
                           const QString& summary) {
  auto found = pending_.find(key);
  if (found == pending_.end()) return;
  Pending pending = found->second;
  pending_.erase(found);
  const store::ToolResult result{pending.call.id, pending.call.name, status};
  if (!store_.append_tool_result(pending.chat, result, text)) {
    emit problem(tr("The result of %1 could not be saved: %2")
                     .arg(pending.call.name, store_.error_string()));
  }
  pending.state = state_of(status);
  show(pending, status == store::ToolStatus::Denied ? QString() : text, summary);
  const bool more = std::any_of(pending_.begin(), pending_.end(), [&](const auto& entry) {
    return entry.second.reply == pending.reply;
  });
  if (!more && status != store::ToolStatus::Cancelled) emit resultsReady(pending.chat);
}

void ChatToolCalls::show(const Pending& pending, const QString& result,
                         const QString& summary) const {
  ui::ToolCallView call;
  call.id = pending.call.id;
  call.server = pending.call.server;
  call.tool = pending.call.name;
  call.arguments = pending.call.arguments;
  call.state = pending.state;
  call.result = result;
  call.summary = summary;
  view_.updateToolCall(store::raw(pending.reply), call);
}

QList<ui::ToolCallView> ChatToolCalls::viewsOf(const store::Message& reply,
                                               const QList<store::Message>& path) const {
  QList<ui::ToolCallView> views;
  for (const store::ToolCall& call : reply.tool_calls) {
    ui::ToolCallView view;
    view.id = call.id;
    view.server = call.server;
    view.tool = call.name;
    view.arguments = call.arguments;
    bool answered = false;
    for (const store::Message& message : path) {
      if (message.role != store::Role::Tool || !message.tool_result ||
          message.tool_result->call_id != call.id || message.position <= reply.position) {
        continue;
      }
      view.state = state_of(message.tool_result->status);
      if (message.tool_result->status != store::ToolStatus::Denied) view.result = message.text;
      view.summary = view.state == State::Denied ? tr("Denied") : stored_summary(message.text);
      answered = true;
      break;
    }
    if (!answered) {
      const auto found = pending_.find(keyOf(reply.id, call.id));
      view.state = found != pending_.end() ? found->second.state : State::AwaitingApproval;
    }
    views.append(view);
  }
  return views;
}

}  // namespace quire::gui
