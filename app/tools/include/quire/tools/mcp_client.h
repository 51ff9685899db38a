#pragma once

// The client side of one MCP server connection (specification revision
// 2025-06-18): the lifecycle (initialize, the version check,
// notifications/initialized), the server's tools (tools/list with its
// pages, again on notifications/tools/list_changed) and tool calls
// (tools/call with a timeout each, notifications/cancelled when a call
// times out or is cancelled, results cut to a size limit).
//
// Everything runs on the thread that owns the client, driven by its event
// loop; nothing blocks. A server that crashes, hangs, or sends something
// that is not JSON-RPC fails the connection with a message that names the
// server and the problem; calls in flight then fail with it. An HTTP server
// that ends the session is connected to again at once (a new initialize),
// as the specification says; the calls in flight then fail.
//
//   McpClient client(config);
//   connect(&client, &McpClient::ready, ...);      // client.tools() is filled
//   connect(&client, &McpClient::failed, ...);     // a sentence for people
//   client.start();
//   ToolCall* call = client.callTool("echo", QJsonObject{{"text", "hi"}});
//   connect(call, &ToolCall::finished, [call](const ToolCallResult& r) {
//     use(r.text, r.is_error, r.summary);
//     call->deleteLater();
//   });

#include <QElapsedTimer>
#include <QHash>
#include <QJsonObject>
#include <QJsonValue>
#include <QList>
#include <QObject>
#include <QPointer>
#include <QSet>
#include <QString>
#include <functional>
#include <string>

#include "quire/tools/tool_server_config.h"

class QTimer;

namespace quire::tools {

class McpTransport;
class McpClient;

// One tool as the server describes it.
struct McpTool {
  QString name;
  QString title;  // for people; "" when the server gives none
  QString description;
  QJsonObject input_schema;   // a JSON schema of the arguments object
  QJsonObject output_schema;  // of structuredContent; empty when none
  QJsonObject annotations;    // hints (readOnlyHint, destructiveHint, ...); untrusted
  bool read_only_hint = false;
  bool destructive_hint = true;

  bool operator==(const McpTool& other) const;
};

enum class ToolCallOutcome {
  Finished,  // the server answered (result.is_error may still be true)
  Failed,    // no usable answer: an error response, a failed server, a bad result
  TimedOut,  // no answer within the call timeout; the server was told
  Cancelled  // cancelled by the caller; the server was told
};

struct ToolCallResult {
  ToolCallOutcome outcome = ToolCallOutcome::Failed;
  // For the model: the result's text (content parts, other kinds described
  // as text, cut to the server's limit), or a sentence saying why there is
  // none.
  QString text;
  // The server's isError, or true for any outcome but Finished.
  bool is_error = true;
  // One short line for people: "Done in 0.3 s: 2 lines, 41 bytes",
  // "The tool reported an error: ...", "Timed out after 60 s", ...
  QString summary;
  // Why the call did not finish (empty when outcome is Finished).
  QString error;
  QJsonValue structured_content;  // undefined when the result has none
  qint64 full_bytes = 0;          // the text's size before it was cut
  qint64 cut_bytes = 0;           // 0 when nothing was cut
  double seconds = 0;
};

// One tool call in flight, then its result. Created by McpClient::callTool
// (or ToolServers::call) and owned by the caller, who deletes it (deleteLater
// in a slot connected to finished is fine). finished() is emitted exactly
// once, never before the event loop runs after the call was made. Deleting
// an unfinished call cancels it.
class ToolCall : public QObject {
  Q_OBJECT

 public:
  ~ToolCall() override;

  QString serverName() const { return server_name_; }
  QString toolName() const { return tool_name_; }
  // The name the model used (ToolServers), or the tool's name.
  QString functionName() const { return function_name_; }
  QJsonObject arguments() const { return arguments_; }

  bool isFinished() const { return finished_; }
  const ToolCallResult& result() const { return result_; }

  // Stops waiting: sends notifications/cancelled to the server and ends
  // the call as Cancelled (nothing when already finished).
  void cancel(const QString& reason = QStringLiteral("cancelled by the user"));

 signals:
  void finished(const quire::tools::ToolCallResult& result);

 private:
  friend class McpClient;
  friend class ToolServers;
  ToolCall(QString server_name, QString tool_name, QJsonObject arguments);
  void finish(ToolCallResult result);       // emits now
  void finishLater(ToolCallResult result);  // emits from the event loop

  QString server_name_;
  QString tool_name_;
  QString function_name_;
  QJsonObject arguments_;
  QPointer<McpClient> client_;
  qint64 request_id_ = 0;
  bool finished_ = false;
  bool finishing_ = false;
  ToolCallResult result_;
  QElapsedTimer clock_;
};

class McpClient : public QObject {
  Q_OBJECT

 public:
  enum class State {
    Stopped,     // not started, or stopped
    Connecting,  // the process or session starts, initialize, the first tools/list
    Ready,       // tools() is known; calls run
    Failed,      // errorString() says why; start() tries again
    Stopping     // stop() waits for the process or session to end
  };
  Q_ENUM(State)

  // The clientInfo sent in initialize (name "Quire").
  static void setClientVersion(const QString& version);
  static QString clientVersion();

  explicit McpClient(ToolServerConfig config, QObject* parent = nullptr);
  // Ends the connection at once (kills a process still running); calls in
  // flight fail.
  ~McpClient() override;

  const ToolServerConfig& config() const { return config_; }
  QString name() const { return config_.name; }
  State state() const { return state_; }
  // Why the connection failed (State::Failed), a sentence naming the server.
  QString errorString() const { return error_; }

  // Starts the connection (from Stopped or Failed; otherwise nothing).
  void start();
  // Ends it as the specification's shutdown says; calls in flight fail;
  // emits stopped() when done.
  void stop();

  // The server's tools (empty until ready), and what initialize told.
  QList<McpTool> tools() const { return tools_; }
  QString serverName() const { return server_name_; }
  QString serverVersion() const { return server_version_; }
  QString protocolVersion() const { return protocol_version_; }
  QString instructions() const { return instructions_; }
  // What the server wrote on stderr lately (stdio servers).
  QString diagnostics() const;

  // Calls `tool` with `arguments`. The call fails (finished() from the
  // event loop) when the client is not ready or has no such tool.
  ToolCall* callTool(const QString& tool, const QJsonObject& arguments);

  // The process id of a stdio server (0 otherwise), for tests.
  qint64 processId() const;
  // The transport of the current connection (nullptr when none), for tests.
  McpTransport* transport() const { return transport_; }

 signals:
  void stateChanged(quire::tools::McpClient::State state);
  void ready();
  void failed(const QString& message);
  void stopped();
  // tools() changed: the first list, or a new one after list_changed.
  void toolsChanged();

 private:
  friend class ToolCall;
  struct Reply {
    bool ok = false;
    std::string result;  // JSON text when ok
    QString error;       // a sentence when not
    qint64 code = 0;     // the JSON-RPC error code, when the server sent one
  };
  struct Pending {
    QString method;
    std::function<void(const Reply&)> done;
    QTimer* timer = nullptr;
    QPointer<ToolCall> call;
    int timeout_ms = 0;
  };

  void setState(State state);
  qint64 sendRequest(const QString& method, const std::string& params, int timeout_ms,
                     std::function<void(const Reply&)> done);
  void sendNotification(const QString& method, const std::string& params);
  void abandon(qint64 id, const QString& reason);
  void requestTimedOut(qint64 id);
  void cancelCall(qint64 id, const QString& reason);
  void transportStarted();
  void messageReceived(const QByteArray& message);
  void requestFailed(const QString& request_id, const QString& error);
  void transportFailed(const QString& error);
  void sessionExpired(const QString& error);
  void connectTransport();
  void transportClosed();
  void initialized(const Reply& reply);
  void listTools(bool initial);
  void listPage(const std::string& cursor, QList<McpTool> so_far, int pages, bool initial);
  void finishCall(const QPointer<ToolCall>& call, const Reply& reply);
  // Fails the connection: `problem` is what went wrong, without the server's name.
  void fail(const QString& problem);
  void failPending(ToolCallOutcome outcome, const QString& error);
  void retireTransport();
  QString label() const;

  ToolServerConfig config_;
  State state_ = State::Stopped;
  QString error_;
  McpTransport* transport_ = nullptr;
  qint64 next_id_ = 1;
  QHash<qint64, Pending> pending_;
  QSet<qint64> abandoned_;  // timed out or cancelled: a late answer is ignored
  QTimer* connect_timer_ = nullptr;
  QList<McpTool> tools_;
  bool listing_ = false;
  bool list_again_ = false;
  QString server_name_;
  QString server_version_;
  QString protocol_version_;
  QString instructions_;
  QString last_diagnostics_;
};

QString to_string(McpClient::State state);

}  // namespace quire::tools
