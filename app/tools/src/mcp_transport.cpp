#include "quire/tools/mcp_transport.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QProcessEnvironment>
#include <QTimer>

#include "quire/remote/sse_decoder.h"

namespace quire::tools {
namespace {

// The last lines of a server's stderr (at most about 600 characters, whole
// lines where they fit), for a message; diagnostics() has the rest.
QString stderr_text(const QByteArray& tail) {
  QString text = QString::fromUtf8(tail).trimmed();
  if (text.isEmpty()) return {};
  constexpr qsizetype kShown = 600;
  if (text.size() > kShown) {
    text = text.right(kShown);
    const qsizetype line = text.indexOf(QLatin1Char('\n'));
    if (line >= 0 && line < text.size() - 1) text = text.mid(line + 1);
    text = QStringLiteral("...") + text;
  }
  return QStringLiteral("; its last words on stderr: ") + text;
}

// The most of one answer (a JSON body, or one event-stream line) read.
constexpr qsizetype kMaxAnswer = 64 * 1024 * 1024;

QString body_start(const QByteArray& body) {
  // A JSON-RPC error body says best what went wrong.
  const QJsonObject object = QJsonDocument::fromJson(body).object();
  const QString message =
      object.value(QStringLiteral("error")).toObject().value(QStringLiteral("message")).toString();
  if (!message.isEmpty()) return message;
  QString text = QString::fromUtf8(body.left(200)).simplified();
  if (body.size() > 200) text += QStringLiteral("...");
  return text;
}

}  // namespace

// ---------------------------------------------------------------- stdio

McpStdioTransport::McpStdioTransport(const ToolServerConfig& config, QObject* parent)
    : McpTransport(parent), config_(config) {}

McpStdioTransport::~McpStdioTransport() {
  if (process_ != nullptr) {
    process_->disconnect(this);
    if (process_->state() != QProcess::NotRunning) {
      process_->kill();
      process_->waitForFinished(2000);
    }
  }
}

void McpStdioTransport::start() {
  if (process_ != nullptr) return;
  process_ = new QProcess(this);
  process_->setProgram(config_.command);
  process_->setArguments(config_.arguments);
  QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
  for (auto it = config_.environment.begin(); it != config_.environment.end(); ++it) {
    environment.insert(it.key(), it.value());
  }
  process_->setProcessEnvironment(environment);
  if (!config_.working_directory.isEmpty())
    process_->setWorkingDirectory(config_.working_directory);
  process_->setProcessChannelMode(QProcess::SeparateChannels);
  connect(process_, &QProcess::started, this, &McpStdioTransport::started);
  connect(process_, &QProcess::readyReadStandardOutput, this, &McpStdioTransport::readStdout);
  connect(process_, &QProcess::readyReadStandardError, this, &McpStdioTransport::readStderr);
  connect(process_, &QProcess::finished, this, &McpStdioTransport::processFinished);
  connect(process_, &QProcess::errorOccurred, this, &McpStdioTransport::processError);
  process_->start();
}

void McpStdioTransport::send(const QByteArray& message, const QString& request_id) {
  Q_UNUSED(request_id);
  if (process_ == nullptr || process_->state() != QProcess::Running || stopping_) return;
  QByteArray line = message;
  line.append('\n');
  process_->write(line);
}

void McpStdioTransport::stop() {
  if (stopping_ || done_) return;
  stopping_ = true;
  if (process_ == nullptr || process_->state() == QProcess::NotRunning) {
    done_ = true;
    QTimer::singleShot(0, this, &McpStdioTransport::closed);
    return;
  }
  // The specification's shutdown: close stdin, wait, SIGTERM, wait, SIGKILL.
  process_->closeWriteChannel();
  QPointer<QProcess> process = process_;
  QTimer::singleShot(kCloseGraceMs, this, [this, process] {
    if (process == nullptr || process->state() == QProcess::NotRunning) return;
    process->terminate();
    QTimer::singleShot(kTerminateGraceMs, this, [process] {
      if (process != nullptr && process->state() != QProcess::NotRunning) process->kill();
    });
  });
}

QString McpStdioTransport::diagnostics() const {
  return QString::fromUtf8(stderr_tail_).trimmed();
}

qint64 McpStdioTransport::processId() const {
  return process_ != nullptr ? process_->processId() : 0;
}

void McpStdioTransport::readStdout() {
  QPointer<McpStdioTransport> self(this);
  line_.append(process_->readAllStandardOutput());
  qsizetype start = 0;
  while (self != nullptr && !done_) {
    const qsizetype end = line_.indexOf('\n', start);
    if (end < 0) break;
    QByteArray line = line_.mid(start, end - start);
    start = end + 1;
    if (line.endsWith('\r')) line.chop(1);
    if (line.trimmed().isEmpty()) continue;
    emit messageReceived(line);
  }
  if (self == nullptr || done_) return;
  line_.remove(0, start);
  if (line_.size() > kMaxLine) {
    fail(QStringLiteral("wrote a line longer than %1 MiB on stdout").arg(kMaxLine >> 20));
  }
}

void McpStdioTransport::readStderr() {
  stderr_tail_.append(process_->readAllStandardError());
  if (stderr_tail_.size() > kStderrTail) stderr_tail_ = stderr_tail_.right(kStderrTail);
}

void McpStdioTransport::processFinished(int exit_code, QProcess::ExitStatus status) {
  readStderr();
  if (stopping_) {
    if (!done_) {
      done_ = true;
      emit closed();
    }
    return;
  }
  if (status == QProcess::CrashExit) {
    fail(QStringLiteral("crashed (exit code %1)").arg(exit_code) + stderr_text(stderr_tail_));
  } else {
    fail(QStringLiteral("exited with code %1").arg(exit_code) + stderr_text(stderr_tail_));
  }
}

void McpStdioTransport::processError(QProcess::ProcessError error) {
  if (error != QProcess::FailedToStart || stopping_) return;
  fail(QStringLiteral("could not start \"%1\": %2").arg(config_.command, process_->errorString()));
}

void McpStdioTransport::fail(const QString& error) {
  if (done_) return;
  done_ = true;
  if (process_ != nullptr && process_->state() != QProcess::NotRunning) {
    // A server that sent garbage is not left running.
    process_->disconnect(this);
    process_->kill();
  }
  emit failed(error);
}

// ----------------------------------------------------------------- http

struct McpHttpTransport::Exchange {
  QString request_id;
  bool decided = false;  // the status and type were read
  bool event_stream = false;
  QByteArray body;
  remote::SseDecoder decoder;
};

McpHttpTransport::McpHttpTransport(const ToolServerConfig& config, QObject* parent)
    : McpTransport(parent), config_(config), network_(new QNetworkAccessManager(this)) {}

McpHttpTransport::~McpHttpTransport() {
  if (events_ != nullptr) {
    events_->disconnect(this);
    events_->abort();
    events_->deleteLater();
  }
  const auto replies = exchanges_.keys();
  exchanges_.clear();
  for (QNetworkReply* reply : replies) {
    reply->disconnect(this);
    reply->abort();
    reply->deleteLater();
  }
}

void McpHttpTransport::start() {
  QTimer::singleShot(0, this, [this] {
    if (!done_ && !stopping_) emit started();
  });
}

void McpHttpTransport::send(const QByteArray& message, const QString& request_id) {
  if (done_ || stopping_) return;
  QNetworkRequest post = request("application/json, text/event-stream");
  post.setHeader(QNetworkRequest::ContentTypeHeader, QStringLiteral("application/json"));
  QNetworkReply* reply = network_->post(post, message);
  auto exchange = std::make_shared<Exchange>();
  exchange->request_id = request_id;
  exchanges_.insert(reply, exchange);
  connect(reply, &QNetworkReply::readyRead, this, [this, reply] { readExchange(reply); });
  connect(reply, &QNetworkReply::finished, this, [this, reply] { finishExchange(reply); });
}

void McpHttpTransport::stop() {
  if (stopping_ || done_) return;
  stopping_ = true;
  if (events_ != nullptr) {
    events_->disconnect(this);
    events_->abort();
    events_->deleteLater();
    events_ = nullptr;
  }
  const auto replies = exchanges_.keys();
  exchanges_.clear();
  for (QNetworkReply* reply : replies) {
    reply->disconnect(this);
    reply->abort();
    reply->deleteLater();
  }
  if (session_id_.isEmpty()) {
    done_ = true;
    QTimer::singleShot(0, this, &McpHttpTransport::closed);
    return;
  }
  // The specification: a client that no longer needs its session SHOULD
  // DELETE it. An answer (or none within two seconds) ends the stop.
  QNetworkRequest end = request(nullptr);
  end.setTransferTimeout(2000);
  QNetworkReply* reply = network_->deleteResource(end);
  connect(reply, &QNetworkReply::finished, this, [this, reply] {
    reply->deleteLater();
    if (!done_) {
      done_ = true;
      emit closed();
    }
  });
}

QNetworkRequest McpHttpTransport::request(const char* accept) const {
  QNetworkRequest out(config_.url);
  if (accept != nullptr) out.setRawHeader("Accept", accept);
  for (auto it = config_.headers.begin(); it != config_.headers.end(); ++it) {
    out.setRawHeader(it.key().toUtf8(), it.value().toUtf8());
  }
  if (!session_id_.isEmpty()) out.setRawHeader("Mcp-Session-Id", session_id_.toUtf8());
  if (!protocol_version_.isEmpty())
    out.setRawHeader("MCP-Protocol-Version", protocol_version_.toUtf8());
  return out;
}

void McpHttpTransport::sessionReady() {
  openEventStream();
}

void McpHttpTransport::openEventStream() {
  if (done_ || stopping_ || events_ != nullptr) return;
  events_decoder_ = std::make_unique<remote::SseDecoder>();
  events_clock_.start();
  events_ = network_->get(request("text/event-stream"));
  connect(events_, &QNetworkReply::readyRead, this, &McpHttpTransport::readEventStream);
  connect(events_, &QNetworkReply::finished, this, &McpHttpTransport::eventStreamEnded);
}

void McpHttpTransport::readEventStream() {
  if (events_ == nullptr) return;
  const int status = events_->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
  const QByteArray bytes = events_->readAll();
  if (status != 200) return;  // 405: the server offers no such stream
  std::vector<remote::SseEvent> events;
  try {
    events = events_decoder_->feed(
        std::string_view(bytes.constData(), static_cast<std::size_t>(bytes.size())));
  } catch (const std::exception&) {
    // A line without end: the stream closes and is not opened again.
    events_failures_ = kEventStreamRetries;
    events_->abort();
    return;
  }
  QPointer<McpHttpTransport> self(this);
  for (const remote::SseEvent& event : events) {
    if (self == nullptr || done_ || stopping_) return;
    if (event.type != "message" || event.data.empty()) continue;
    events_failures_ = 0;
    emit messageReceived(QByteArray::fromStdString(event.data));
  }
}

void McpHttpTransport::eventStreamEnded() {
  if (events_ == nullptr) return;
  readEventStream();
  if (events_ == nullptr) return;
  const int status = events_->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
  events_->deleteLater();
  events_ = nullptr;
  if (done_ || stopping_ || status == 405) return;
  if (status == 404 && !session_id_.isEmpty()) {
    expire();
    return;
  }
  // The server may close the stream at any time; it opens again, unless it
  // cannot open or closes at once several times in a row.
  if (status != 200 || events_clock_.elapsed() < 1000) ++events_failures_;
  if (events_failures_ >= kEventStreamRetries) return;
  QTimer::singleShot(1000, this, &McpHttpTransport::openEventStream);
}

void McpHttpTransport::forgetRequest(const QString& request_id) {
  for (auto it = exchanges_.begin(); it != exchanges_.end(); ++it) {
    if (it.value()->request_id != request_id) continue;
    QNetworkReply* reply = it.key();
    exchanges_.erase(it);
    reply->disconnect(this);
    reply->abort();
    reply->deleteLater();
    return;
  }
}

void McpHttpTransport::readExchange(QNetworkReply* reply) {
  const auto found = exchanges_.find(reply);
  if (found == exchanges_.end()) return;
  std::shared_ptr<Exchange> exchange = found.value();
  if (!exchange->decided) {
    const QVariant status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute);
    if (!status.isValid()) return;
    exchange->decided = true;
    const QByteArray session = reply->rawHeader("Mcp-Session-Id");
    if (session_id_.isEmpty() && !session.isEmpty()) session_id_ = QString::fromLatin1(session);
    const QString type = reply->header(QNetworkRequest::ContentTypeHeader).toString().toLower();
    exchange->event_stream =
        status.toInt() / 100 == 2 && type.startsWith(QLatin1String("text/event-stream"));
  }
  const QByteArray bytes = reply->readAll();
  std::vector<remote::SseEvent> events;
  bool too_long = false;
  if (!exchange->event_stream) {
    exchange->body.append(bytes);
    too_long = exchange->body.size() > kMaxAnswer;
  } else {
    try {
      events = exchange->decoder.feed(
          std::string_view(bytes.constData(), static_cast<std::size_t>(bytes.size())));
    } catch (const std::exception&) {
      too_long = true;
    }
  }
  if (too_long) {
    // That answer is given up, not the connection.
    exchanges_.remove(reply);
    reply->disconnect(this);
    reply->abort();
    reply->deleteLater();
    if (!exchange->request_id.isEmpty()) {
      emit requestFailed(
          exchange->request_id,
          exchange->event_stream
              ? QStringLiteral("the server sent an event longer than %1 MiB")
                    .arg(remote::SseDecoder::kMaxLine >> 20)
              : QStringLiteral("the server's answer is longer than %1 MiB").arg(kMaxAnswer >> 20));
    }
    return;
  }
  QPointer<McpHttpTransport> self(this);
  for (const remote::SseEvent& event : events) {
    if (self == nullptr || done_ || stopping_) return;
    if (event.type != "message" || event.data.empty()) continue;
    emit messageReceived(QByteArray::fromStdString(event.data));
  }
}

void McpHttpTransport::finishExchange(QNetworkReply* reply) {
  if (!exchanges_.contains(reply)) return;
  readExchange(reply);
  const auto found = exchanges_.find(reply);
  if (found == exchanges_.end()) return;
  std::shared_ptr<Exchange> exchange = found.value();
  exchanges_.erase(found);
  reply->deleteLater();
  if (done_ || stopping_) return;
  const QVariant status_value = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute);
  const QString where = config_.url.toString(QUrl::RemoveUserInfo);
  if (!status_value.isValid()) {
    const QString error = QStringLiteral("could not reach %1: %2").arg(where, reply->errorString());
    if (!exchange->request_id.isEmpty()) emit requestFailed(exchange->request_id, error);
    return;
  }
  const int status = status_value.toInt();
  if (status == 404 && !session_id_.isEmpty()) {
    expire();
    return;
  }
  if (status / 100 != 2) {
    if (!exchange->request_id.isEmpty()) {
      emit requestFailed(exchange->request_id, QStringLiteral("%1 answered HTTP %2: %3")
                                                   .arg(where)
                                                   .arg(status)
                                                   .arg(body_start(exchange->body)));
    }
    return;
  }
  QPointer<McpHttpTransport> self(this);
  if (!exchange->event_stream && !exchange->body.trimmed().isEmpty()) {
    emit messageReceived(exchange->body.trimmed());
  }
  if (self == nullptr || done_) return;
  if (!exchange->request_id.isEmpty()) {
    // Ignored by the client when the answer came.
    emit requestFailed(exchange->request_id,
                       exchange->event_stream
                           ? QStringLiteral("the server's event stream ended without an answer")
                           : QStringLiteral("the server's HTTP answer held no response"));
  }
}

void McpHttpTransport::expire() {
  if (done_) return;
  done_ = true;
  emit sessionExpired(QStringLiteral("ended the session (HTTP 404 from %1)")
                          .arg(config_.url.toString(QUrl::RemoveUserInfo)));
}

void McpHttpTransport::fail(const QString& error) {
  if (done_) return;
  done_ = true;
  emit failed(error);
}

std::unique_ptr<McpTransport> make_mcp_transport(const ToolServerConfig& config) {
  if (config.transport == ToolTransport::Http) return std::make_unique<McpHttpTransport>(config);
  return std::make_unique<McpStdioTransport>(config);
}

}  // namespace quire::tools
