#include <QJsonDocument>
#include <QPointer>
#include <QTimer>

#include "mcp_text.h"
#include "quire/tools/mcp_client.h"
#include "quire/tools/mcp_protocol.h"
#include "quire/tools/mcp_transport.h"

// One tool call from start to end: the handle (ToolCall) and the client's
// side of tools/call, its timeout and its cancellation.

namespace quire::tools {

using namespace mcp_text;

ToolCall::ToolCall(QString server_name, QString tool_name, QJsonObject arguments)
    : server_name_(std::move(server_name)),
      tool_name_(std::move(tool_name)),
      function_name_(tool_name_),
      arguments_(std::move(arguments)) {
  clock_.start();
}

ToolCall::~ToolCall() {
  if (!finished_ && client_ != nullptr && request_id_ != 0) {
    finished_ = true;  // nothing is emitted from a destructor
    client_->cancelCall(request_id_, QStringLiteral("cancelled by the user"));
  }
}

void ToolCall::cancel(const QString& reason) {
  if (finished_ || finishing_) return;
  if (client_ != nullptr && request_id_ != 0) {
    client_->cancelCall(request_id_, reason);
  } else {
    finishLater(ended(ToolCallOutcome::Cancelled, QStringLiteral("cancelled: ") + reason));
  }
}

void ToolCall::finish(ToolCallResult result) {
  if (finished_) return;
  finished_ = true;
  finishing_ = false;
  result.seconds = clock_.elapsed() / 1000.0;
  result_ = std::move(result);
  emit finished(result_);
}

void ToolCall::finishLater(ToolCallResult result) {
  if (finished_ || finishing_) return;
  finishing_ = true;
  QTimer::singleShot(0, this, [this, result = std::move(result)]() mutable {
    finishing_ = false;
    finish(std::move(result));
  });
}

void McpClient::cancelCall(qint64 id, const QString& reason) {
  const auto found = pending_.find(id);
  if (found == pending_.end()) return;
  QPointer<ToolCall> guarded = found->call;
  abandon(id, reason);
  ToolCall* call = guarded.data();
  if (call != nullptr && !call->isFinished()) {
    call->finish(ended(ToolCallOutcome::Cancelled, QStringLiteral("cancelled: ") + reason));
  }
}

ToolCall* McpClient::callTool(const QString& tool, const QJsonObject& arguments) {
  auto* call = new ToolCall(config_.name, tool, arguments);
  if (state_ != State::Ready || transport_ == nullptr) {
    QString why =
        error_.isEmpty() ? label() + QStringLiteral(" is %1").arg(to_string(state_)) : error_;
    call->finishLater(ended(ToolCallOutcome::Failed, why));
    return call;
  }
  bool known = false;
  for (const McpTool& each : tools_)
    known = known || each.name == tool;
  if (!known) {
    call->finishLater(
        ended(ToolCallOutcome::Failed, QStringLiteral("%1 has no tool \"%2\"").arg(label(), tool)));
    return call;
  }
  call->client_ = this;
  const QByteArray arguments_json = QJsonDocument(arguments).toJson(QJsonDocument::Compact);
  QPointer<ToolCall> guarded(call);
  call->request_id_ = sendRequest(
      QStringLiteral("tools/call"), tools_call_params(tool.toStdString(), std_of(arguments_json)),
      config_.call_timeout_ms, [this, guarded](const Reply& reply) { finishCall(guarded, reply); });
  pending_[call->request_id_].call = guarded;
  return call;
}

void McpClient::finishCall(const QPointer<ToolCall>& guarded, const Reply& reply) {
  ToolCall* call = guarded.data();
  if (call == nullptr || call->isFinished()) return;
  if (!reply.ok) {
    call->finish(
        ended(ToolCallOutcome::Failed, QStringLiteral("tool \"%1\" on server \"%2\" failed: %3")
                                           .arg(call->toolName(), config_.name, reply.error)));
    return;
  }
  const ToolCallText text =
      read_tool_call_result(reply.result, static_cast<std::size_t>(config_.max_result_bytes));
  if (!text.error.empty()) {
    call->finish(ended(
        ToolCallOutcome::Failed,
        QStringLiteral("tool \"%1\" on server \"%2\" sent a result that could not be read: %3")
            .arg(call->toolName(), config_.name, from_std(text.error))));
    return;
  }
  ToolCallResult result;
  result.outcome = ToolCallOutcome::Finished;
  result.text = from_std(text.text);
  result.is_error = text.is_error;
  result.structured_content = value_of(text.structured_content);
  result.full_bytes = static_cast<qint64>(text.full_bytes);
  result.cut_bytes = static_cast<qint64>(text.cut_bytes);
  const double seconds = call->clock_.elapsed() / 1000.0;
  if (result.is_error) {
    result.summary = QStringLiteral("The tool reported an error: ") + first_line(result.text);
  } else {
    const qint64 lines = text.full_bytes == 0 ? 0 : result.text.count(QLatin1Char('\n')) + 1;
    result.summary = QStringLiteral("Done in %1 s: %2 %3, %4")
                         .arg(QString::number(seconds, 'f', 1))
                         .arg(lines)
                         .arg(lines == 1 ? QStringLiteral("line") : QStringLiteral("lines"))
                         .arg(size_text(result.full_bytes));
    if (result.cut_bytes > 0) {
      result.summary += QStringLiteral(" (cut to %1)").arg(size_text(config_.max_result_bytes));
    }
  }
  call->finish(std::move(result));
}

}  // namespace quire::tools
