#pragma once

// How MCP messages travel between Quire and one server (the specification's
// "Transports"): McpStdioTransport starts the server's command and speaks
// newline-delimited JSON on its stdin and stdout; McpHttpTransport speaks
// Streamable HTTP (each message POSTed; answers as JSON or as an event
// stream; the session in Mcp-Session-Id; a GET event stream for what the
// server sends unasked). Both run on the thread that owns them and never
// block it (but for the destructor of a stdio transport whose process still
// runs: it kills it and reaps it). McpClient drives one; nothing else needs
// to.
//
// Limits: a stdio line of 64 MiB fails the connection; over HTTP, an answer
// of 64 MiB or an event-stream line of 8 MiB fails its request only.

#include <QByteArray>
#include <QElapsedTimer>
#include <QHash>
#include <QMap>
#include <QObject>
#include <QPointer>
#include <QProcess>
#include <QString>
#include <QStringList>
#include <QUrl>
#include <memory>

#include "quire/tools/tool_server_config.h"

class QNetworkAccessManager;
class QNetworkRequest;
class QNetworkReply;
class QTimer;

namespace quire::remote {
class SseDecoder;
}

namespace quire::tools {

class McpTransport : public QObject {
  Q_OBJECT

 public:
  using QObject::QObject;
  ~McpTransport() override = default;

  // Starts (the process, or nothing for HTTP); emits started() or failed().
  virtual void start() = 0;
  // Sends one message (compact JSON, no newline). `request_id` is the id's
  // JSON text for a request, "" for a notification or a response: a
  // transport that learns a request cannot be answered (an HTTP error)
  // reports it with requestFailed.
  virtual void send(const QByteArray& message, const QString& request_id) = 0;
  // Ends the connection as the specification's shutdown says; emits
  // closed() when done (at once when nothing runs). No failed() follows.
  virtual void stop() = 0;
  // The client no longer waits for request `request_id` (it timed out or
  // was cancelled, and notifications/cancelled went out): HTTP closes the
  // request's event stream rather than keep a connection for nothing.
  virtual void forgetRequest(const QString& request_id) { Q_UNUSED(request_id); }
  // The revision agreed in initialize, which HTTP sends in a header.
  virtual void setProtocolVersion(const QString& version) { Q_UNUSED(version); }
  // The session is initialized: HTTP opens its event stream for what the
  // server sends unasked (a GET; a server without one answers 405).
  virtual void sessionReady() {}
  // What the server wrote on stderr lately (stdio), for error messages.
  virtual QString diagnostics() const { return {}; }

 signals:
  void started();
  // One message as it arrived (JSON text, not yet checked).
  void messageReceived(const QByteArray& message);
  // The request with this id will not be answered: why, in a sentence.
  void requestFailed(const QString& request_id, const QString& error);
  // The connection is gone (the process exited): why.
  void failed(const QString& error);
  // The server ended the HTTP session (it answered 404 to the session's
  // id): the specification has the client start a new one. Nothing more
  // comes from this transport.
  void sessionExpired(const QString& error);
  void closed();
};

class McpStdioTransport : public McpTransport {
  Q_OBJECT

 public:
  // How much of stderr is kept for messages, and the longest line accepted
  // on stdout (a larger one fails the connection rather than growing).
  static constexpr qsizetype kStderrTail = 4096;
  static constexpr qsizetype kMaxLine = 64 * 1024 * 1024;
  // Shutdown: after stdin closes, how long before SIGTERM, then SIGKILL.
  static constexpr int kCloseGraceMs = 2000;
  static constexpr int kTerminateGraceMs = 2000;

  McpStdioTransport(const ToolServerConfig& config, QObject* parent = nullptr);
  ~McpStdioTransport() override;

  void start() override;
  void send(const QByteArray& message, const QString& request_id) override;
  void stop() override;
  QString diagnostics() const override;
  // The process id while it runs (0 otherwise), for tests.
  qint64 processId() const;

 private:
  void readStdout();
  void readStderr();
  void processFinished(int exit_code, QProcess::ExitStatus status);
  void processError(QProcess::ProcessError error);
  void fail(const QString& error);

  ToolServerConfig config_;
  QProcess* process_ = nullptr;
  QByteArray line_;
  QByteArray stderr_tail_;
  bool stopping_ = false;
  bool done_ = false;  // failed() or closed() was emitted
};

class McpHttpTransport : public McpTransport {
  Q_OBJECT

 public:
  McpHttpTransport(const ToolServerConfig& config, QObject* parent = nullptr);
  ~McpHttpTransport() override;

  void start() override;
  void send(const QByteArray& message, const QString& request_id) override;
  void stop() override;
  void setProtocolVersion(const QString& version) override { protocol_version_ = version; }
  void forgetRequest(const QString& request_id) override;
  void sessionReady() override;
  // Whether the GET event stream is open, for tests.
  bool eventStreamOpen() const { return events_ != nullptr; }
  // The session the server gave in its answer to initialize ("" if none).
  QString sessionId() const { return session_id_; }

 private:
  struct Exchange;
  void finishExchange(QNetworkReply* reply);
  void readExchange(QNetworkReply* reply);
  void fail(const QString& error);
  void expire();
  QNetworkRequest request(const char* accept) const;
  void openEventStream();
  void readEventStream();
  void eventStreamEnded();

  ToolServerConfig config_;
  QNetworkAccessManager* network_ = nullptr;
  // The GET stream, its decoder, when it opened, and how many times in a
  // row it could not open or closed at once (it is opened again after a
  // second, up to kEventStreamRetries times in a row).
  static constexpr int kEventStreamRetries = 3;
  QNetworkReply* events_ = nullptr;
  std::unique_ptr<remote::SseDecoder> events_decoder_;
  QElapsedTimer events_clock_;
  int events_failures_ = 0;
  QHash<QNetworkReply*, std::shared_ptr<Exchange>> exchanges_;
  QString session_id_;
  QString protocol_version_;
  bool stopping_ = false;
  bool done_ = false;
};

// The transport `config` asks for.
std::unique_ptr<McpTransport> make_mcp_transport(const ToolServerConfig& config);

}  // namespace quire::tools
