#include "quire/tools/mcp_client.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTimer>
#include <utility>

#include "mcp_text.h"
#include "quire/tools/mcp_protocol.h"
#include "quire/tools/mcp_transport.h"

namespace quire::tools {
namespace {

using namespace mcp_text;

QString client_version_value = QStringLiteral("0.1");

// Pages of tools/list followed before the list counts as endless.
constexpr int kMaxListPages = 1000;

}  // namespace

bool McpTool::operator==(const McpTool& other) const {
  return name == other.name && title == other.title && description == other.description &&
         input_schema == other.input_schema && output_schema == other.output_schema &&
         annotations == other.annotations;
}

QString to_string(McpClient::State state) {
  switch (state) {
    case McpClient::State::Stopped:
      return QStringLiteral("stopped");
    case McpClient::State::Connecting:
      return QStringLiteral("connecting");
    case McpClient::State::Ready:
      return QStringLiteral("ready");
    case McpClient::State::Failed:
      return QStringLiteral("failed");
    case McpClient::State::Stopping:
      return QStringLiteral("stopping");
  }
  return {};
}

// -------------------------------------------------------------- McpClient

void McpClient::setClientVersion(const QString& version) {
  client_version_value = version;
}
QString McpClient::clientVersion() {
  return client_version_value;
}

McpClient::McpClient(ToolServerConfig config, QObject* parent)
    : QObject(parent), config_(std::move(config)) {
  connect_timer_ = new QTimer(this);
  connect_timer_->setSingleShot(true);
  connect(connect_timer_, &QTimer::timeout, this, [this] {
    if (state_ != State::Connecting) return;
    bool listing = false;
    for (const Pending& pending : pending_)
      listing = listing || pending.method == QLatin1String("tools/list");
    fail((listing ? QStringLiteral("did not list its tools within %1 s")
                  : QStringLiteral("did not answer initialize within %1 s"))
             .arg(seconds_text(config_.connect_timeout_ms)));
  });
}

McpClient::~McpClient() {
  const QString error = label() + QStringLiteral(" was closed");
  failPending(ToolCallOutcome::Failed, error);
  if (transport_ != nullptr) {
    transport_->disconnect(this);
    delete transport_;  // kills a process still running
    transport_ = nullptr;
  }
}

QString McpClient::label() const {
  return QStringLiteral("Tool server \"%1\"").arg(config_.name);
}

QString McpClient::diagnostics() const {
  return transport_ != nullptr ? transport_->diagnostics() : last_diagnostics_;
}

qint64 McpClient::processId() const {
  auto* stdio = qobject_cast<McpStdioTransport*>(transport_);
  return stdio != nullptr ? stdio->processId() : 0;
}

void McpClient::setState(State state) {
  if (state_ == state) return;
  state_ = state;
  emit stateChanged(state);
}

void McpClient::start() {
  if (state_ != State::Stopped && state_ != State::Failed) return;
  retireTransport();
  error_.clear();
  tools_.clear();
  abandoned_.clear();
  listing_ = false;
  list_again_ = false;
  const QStringList problems = config_.validate();
  if (!problems.isEmpty()) {
    setState(State::Connecting);
    QTimer::singleShot(0, this, [this, problems] {
      if (state_ == State::Connecting && transport_ == nullptr)
        fail(QStringLiteral("cannot start: ") + problems.join(QLatin1Char(' ')));
    });
    return;
  }
  connectTransport();
}

void McpClient::connectTransport() {
  transport_ = make_mcp_transport(config_).release();
  transport_->setParent(this);
  connect(transport_, &McpTransport::started, this, &McpClient::transportStarted);
  connect(transport_, &McpTransport::messageReceived, this, &McpClient::messageReceived);
  connect(transport_, &McpTransport::requestFailed, this, &McpClient::requestFailed);
  connect(transport_, &McpTransport::failed, this, &McpClient::transportFailed);
  connect(transport_, &McpTransport::sessionExpired, this, &McpClient::sessionExpired);
  connect(transport_, &McpTransport::closed, this, &McpClient::transportClosed);
  setState(State::Connecting);
  connect_timer_->start(config_.connect_timeout_ms);
  transport_->start();
}

void McpClient::sessionExpired(const QString& error) {
  if (state_ != State::Ready) {
    fail(error);
    return;
  }
  // A new session: what was asked in the old one is lost.
  const QString message =
      label() + QLatin1Char(' ') + error + QStringLiteral("; a new session is started.");
  failPending(ToolCallOutcome::Failed, message);
  if (state_ != State::Ready || transport_ == nullptr) return;  // a slot stopped it
  retireTransport();
  abandoned_.clear();
  listing_ = false;
  list_again_ = false;
  connectTransport();
}

void McpClient::stop() {
  if (state_ == State::Stopped || state_ == State::Stopping) return;
  connect_timer_->stop();
  failPending(ToolCallOutcome::Failed, label() + QStringLiteral(" was stopped"));
  if (transport_ == nullptr) {
    setState(State::Stopped);
    emit stopped();
    return;
  }
  setState(State::Stopping);
  transport_->stop();
}

void McpClient::transportClosed() {
  retireTransport();
  if (state_ == State::Stopping) {
    setState(State::Stopped);
    emit stopped();
  }
}

void McpClient::retireTransport() {
  if (transport_ == nullptr) return;
  last_diagnostics_ = transport_->diagnostics();
  McpTransport* transport = transport_;
  transport_ = nullptr;
  transport->disconnect(this);
  // A transport that still runs its shutdown (a process given time to exit,
  // a session's DELETE) finishes it on its own, then goes.
  connect(transport, &McpTransport::closed, transport, &QObject::deleteLater);
  connect(transport, &McpTransport::failed, transport, &QObject::deleteLater);
  transport->stop();
  QTimer::singleShot(McpStdioTransport::kCloseGraceMs + McpStdioTransport::kTerminateGraceMs + 1000,
                     transport, &QObject::deleteLater);
}

void McpClient::transportStarted() {
  if (state_ != State::Connecting) return;
  sendRequest(QStringLiteral("initialize"),
              initialize_params("Quire", clientVersion().toStdString()), config_.connect_timeout_ms,
              [this](const Reply& reply) { initialized(reply); });
}

void McpClient::initialized(const Reply& reply) {
  if (state_ != State::Connecting) return;
  if (!reply.ok) {
    fail(QStringLiteral("could not initialize: ") + reply.error);
    return;
  }
  const InitializeResult result = read_initialize_result(reply.result);
  if (!result.error.empty()) {
    fail(QStringLiteral("answered initialize with something unreadable: ") +
         from_std(result.error));
    return;
  }
  if (!is_known_protocol_version(result.protocol_version)) {
    fail(QStringLiteral("speaks MCP revision \"%1\", which Quire does not (it knows %2)")
             .arg(from_std(result.protocol_version), from_std(known_protocol_versions())));
    return;
  }
  protocol_version_ = from_std(result.protocol_version);
  server_name_ = from_std(result.server_name);
  server_version_ = from_std(result.server_version);
  instructions_ = from_std(result.instructions);
  transport_->setProtocolVersion(protocol_version_);
  sendNotification(QStringLiteral("notifications/initialized"), {});
  if (!result.has_tools) {
    // A server without tools is ready with none.
    connect_timer_->stop();
    setState(State::Ready);
    if (transport_ != nullptr) transport_->sessionReady();
    emit toolsChanged();
    emit ready();
    return;
  }
  listTools(/*initial=*/true);
}

void McpClient::listTools(bool initial) {
  if (listing_) {
    list_again_ = true;
    return;
  }
  listing_ = true;
  list_again_ = false;
  listPage({}, {}, 0, initial);
}

void McpClient::listPage(const std::string& cursor, QList<McpTool> so_far, int pages,
                         bool initial) {
  const int timeout = initial ? config_.connect_timeout_ms : config_.call_timeout_ms;
  sendRequest(
      QStringLiteral("tools/list"), tools_list_params(cursor), timeout,
      [this, so_far = std::move(so_far), pages, initial, cursor](const Reply& reply) mutable {
        if (state_ != State::Connecting && state_ != State::Ready) return;
        QString problem;
        ToolsListPage page;
        if (!reply.ok) {
          problem = QStringLiteral("could not list its tools: ") + reply.error;
        } else {
          page = read_tools_list(reply.result);
          if (!page.error.empty()) {
            problem = QStringLiteral("sent a tools/list result that could not be read: ") +
                      from_std(page.error);
          } else if (!page.next_cursor.empty() &&
                     (page.next_cursor == cursor || pages + 1 >= kMaxListPages)) {
            problem = QStringLiteral("sent tools/list pages without end");
          }
        }
        if (!problem.isEmpty()) {
          listing_ = false;
          if (initial) {
            fail(problem);
          } else {
            qWarning("%s %s", qPrintable(label()), qPrintable(problem));
          }
          return;
        }
        for (const ToolDescriptor& descriptor : page.tools)
          so_far.append(tool_of(descriptor));
        if (!page.next_cursor.empty()) {
          listPage(page.next_cursor, std::move(so_far), pages + 1, initial);
          return;
        }
        listing_ = false;
        const bool changed = tools_ != so_far || initial;
        tools_ = std::move(so_far);
        if (initial) {
          connect_timer_->stop();
          setState(State::Ready);
          if (transport_ != nullptr) transport_->sessionReady();
        }
        if (changed) emit toolsChanged();
        if (initial) emit ready();
        if (list_again_ && state_ == State::Ready) listTools(false);
      });
}

qint64 McpClient::sendRequest(const QString& method, const std::string& params, int timeout_ms,
                              std::function<void(const Reply&)> done) {
  const qint64 id = next_id_++;
  Pending pending;
  pending.method = method;
  pending.done = std::move(done);
  pending.timeout_ms = timeout_ms;
  pending.timer = new QTimer(this);
  pending.timer->setSingleShot(true);
  connect(pending.timer, &QTimer::timeout, this, [this, id] { requestTimedOut(id); });
  pending.timer->start(timeout_ms);
  pending_.insert(id, std::move(pending));
  if (transport_ == nullptr) return id;  // the connection timer or stop() ends it
  transport_->send(bytes_of(json_rpc_request(id, method.toStdString(), params)),
                   QString::number(id));
  return id;
}

void McpClient::sendNotification(const QString& method, const std::string& params) {
  if (transport_ == nullptr) return;
  transport_->send(bytes_of(json_rpc_notification(method.toStdString(), params)), {});
}

void McpClient::abandon(qint64 id, const QString& reason) {
  const auto found = pending_.find(id);
  if (found == pending_.end()) return;
  delete found->timer;
  pending_.erase(found);
  abandoned_.insert(id);
  // The specification: the client SHOULD tell the server a request it no
  // longer waits for (never initialize).
  sendNotification(QStringLiteral("notifications/cancelled"),
                   cancelled_params(id, reason.toStdString()));
  if (transport_ != nullptr) transport_->forgetRequest(QString::number(id));
}

void McpClient::requestTimedOut(qint64 id) {
  const auto found = pending_.find(id);
  if (found == pending_.end()) return;
  const QString method = found->method;
  const int timeout_ms = found->timeout_ms;
  if (method == QLatin1String("initialize")) {
    fail(QStringLiteral("did not answer initialize within %1 s").arg(seconds_text(timeout_ms)));
    return;
  }
  ToolCall* call = found->call.data();
  std::function<void(const Reply&)> done = found->done;
  const QString reason = QStringLiteral("timed out after %1 s").arg(seconds_text(timeout_ms));
  abandon(id, reason);
  if (call != nullptr) {
    call->finish(
        ended(ToolCallOutcome::TimedOut, QStringLiteral("tool \"%1\" on server \"%2\" %3")
                                             .arg(call->toolName(), config_.name, reason)));
    return;
  }
  Reply reply;
  reply.error = method + QLatin1Char(' ') + reason;
  if (done) done(reply);
}

void McpClient::messageReceived(const QByteArray& message) {
  const JsonRpcParse parse = parse_json_rpc(
      std::string_view(message.constData(), static_cast<std::size_t>(message.size())));
  if (!parse.ok()) {
    fail(QStringLiteral("sent a message that is not MCP: ") + from_std(parse.error));
    return;
  }
  QPointer<McpClient> self(this);
  for (const JsonRpcMessage& each : parse.messages) {
    if (self == nullptr || transport_ == nullptr) return;
    switch (each.kind) {
      case JsonRpcKind::Request: {
        // No client capabilities are declared: only ping is answered.
        if (each.method == "ping") {
          transport_->send(bytes_of(json_rpc_result(each.id, "{}")), {});
        } else {
          transport_->send(
              bytes_of(json_rpc_error(each.id, -32601, "Method not found: " + each.method)), {});
        }
        break;
      }
      case JsonRpcKind::Notification:
        if (each.method == "notifications/tools/list_changed" && state_ == State::Ready) {
          listTools(false);
        }
        break;
      case JsonRpcKind::Response:
      case JsonRpcKind::ErrorResponse: {
        bool numeric = false;
        const qint64 id = QString::fromStdString(each.id).toLongLong(&numeric);
        if (!numeric || !pending_.contains(id)) {
          if (numeric && abandoned_.contains(id)) break;  // answered after we stopped waiting
          if (each.kind == JsonRpcKind::ErrorResponse && each.id == "null") {
            fail(QStringLiteral("reported an error: %1 (code %2)")
                     .arg(from_std(each.error_message))
                     .arg(each.error_code));
          } else {
            fail(QStringLiteral("answered a request that was never sent (id %1)")
                     .arg(from_std(each.id)));
          }
          return;
        }
        Pending pending = pending_.take(id);
        delete pending.timer;
        Reply reply;
        if (each.kind == JsonRpcKind::Response) {
          reply.ok = true;
          reply.result = each.result;
        } else {
          reply.code = each.error_code;
          reply.error = QStringLiteral("the server answered error %1: %2")
                            .arg(each.error_code)
                            .arg(from_std(each.error_message));
        }
        if (pending.done) pending.done(reply);
        break;
      }
    }
  }
}

void McpClient::requestFailed(const QString& request_id, const QString& error) {
  bool numeric = false;
  const qint64 id = request_id.toLongLong(&numeric);
  if (!numeric) return;
  if (!pending_.contains(id)) return;  // answered already
  Pending pending = pending_.take(id);
  delete pending.timer;
  Reply reply;
  reply.error = error;
  if (pending.done) pending.done(reply);
}

void McpClient::transportFailed(const QString& error) {
  fail(error);
}

void McpClient::fail(const QString& problem) {
  if (state_ == State::Failed || state_ == State::Stopped) return;
  connect_timer_->stop();
  error_ = label() + QLatin1Char(' ') + problem;
  if (!error_.endsWith(QLatin1Char('.'))) error_ += QLatin1Char('.');
  retireTransport();
  setState(State::Failed);
  failPending(ToolCallOutcome::Failed, error_);
  emit failed(error_);
}

void McpClient::failPending(ToolCallOutcome outcome, const QString& error) {
  QHash<qint64, Pending> pending;
  pending.swap(pending_);
  for (Pending& each : pending) {
    delete each.timer;
    ToolCall* call = each.call.data();
    if (call != nullptr && !call->isFinished()) call->finish(ended(outcome, error));
  }
}

}  // namespace quire::tools
