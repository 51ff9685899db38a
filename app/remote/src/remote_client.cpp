#include "quire/remote/remote_client.h"

#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QSslError>
#include <algorithm>

#include "quire/remote/sse_decoder.h"

namespace quire::remote {
namespace {

// Error bodies are short; a server that sends more is not answering as an
// engine would, and its body is not kept whole.
constexpr qsizetype kMaxBody = 4 * 1024 * 1024;

QString from_utf8(const std::string& text) {
  return QString::fromUtf8(text.data(), static_cast<qsizetype>(text.size()));
}

bool is_event_stream(const QNetworkReply& reply) {
  return reply.header(QNetworkRequest::ContentTypeHeader)
      .toString()
      .startsWith(QStringLiteral("text/event-stream"), Qt::CaseInsensitive);
}

int status_of(const QNetworkReply& reply) {
  return reply.attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
}

}  // namespace

QUrl RemoteEndpoint::url(const QString& path) const {
  QUrl url = base;
  QString prefix = base.path();
  while (prefix.endsWith(QLatin1Char('/')))
    prefix.chop(1);
  url.setPath(prefix + path);
  return url;
}

QString RemoteEndpoint::name() const {
  const int port = base.port();
  return port < 0 ? base.host() : QStringLiteral("%1:%2").arg(base.host()).arg(port);
}

std::optional<QUrl> endpoint_base_url(const QString& typed, QString* error) {
  QString text = typed.trimmed();
  const auto fail = [&](const QString& why) -> std::optional<QUrl> {
    if (error) *error = why;
    return std::nullopt;
  };
  if (text.isEmpty()) return fail(QStringLiteral("No endpoint address is given."));
  if (!text.contains(QStringLiteral("://"))) text.prepend(QStringLiteral("http://"));
  QUrl url(text, QUrl::StrictMode);
  if (!url.isValid() || url.host().isEmpty()) {
    return fail(QStringLiteral("\"%1\" is not an address such as http://gpu-box:8000.")
                    .arg(typed.trimmed()));
  }
  if (url.scheme() != QStringLiteral("http") && url.scheme() != QStringLiteral("https")) {
    return fail(QStringLiteral("\"%1\" is not an http or https address.").arg(typed.trimmed()));
  }
  if (url.hasQuery() || url.hasFragment()) {
    return fail(QStringLiteral("\"%1\" holds a query or fragment; give the engine's base "
                               "address, such as http://gpu-box:8000/v1.")
                    .arg(typed.trimmed()));
  }
  QString path = url.path();
  while (path.endsWith(QLatin1Char('/')))
    path.chop(1);
  if (path.endsWith(QStringLiteral("/v1"))) path.chop(3);
  url.setPath(path);
  url.setUserInfo(QString());
  return url;
}

QString describe_failure(const RemoteEndpoint& endpoint, const QString& what, int status,
                         int network_error, const QString& network_text,
                         const QString& body_message) {
  const QString name = endpoint.name();
  const QString said = body_message.isEmpty() ? QString() : QStringLiteral(": ") + body_message;
  if (status == 401 || status == 403) {
    return endpoint.api_key.isEmpty()
               ? QStringLiteral(
                     "%1 needs an API key for %2 (HTTP %3%4). Enter the key the "
                     "engine was started with in Settings.")
                     .arg(name, what)
                     .arg(status)
                     .arg(said)
               : QStringLiteral(
                     "%1 refused the API key for %2 (HTTP %3%4). Check the key in "
                     "Settings.")
                     .arg(name, what)
                     .arg(status)
                     .arg(said);
  }
  if (status == 404) {
    return QStringLiteral(
               "%1 has no such model or path for %2 (HTTP 404%3). Choose a model from "
               "the endpoint's list again, and check that the address is the "
               "engine's OpenAI API (often ending in /v1).")
        .arg(name, what, said);
  }
  if (status >= 400) {
    return QStringLiteral("%1 failed %2 (HTTP %3%4).").arg(name, what).arg(status).arg(said);
  }
  switch (static_cast<QNetworkReply::NetworkError>(network_error)) {
    case QNetworkReply::HostNotFoundError:
      return QStringLiteral("The host of %1 was not found. Check the address in Settings.")
          .arg(name);
    case QNetworkReply::ConnectionRefusedError:
      return QStringLiteral(
                 "Nothing answers at %1 (connection refused). Start the engine "
                 "there, or check the address and port in Settings.")
          .arg(name);
    case QNetworkReply::TimeoutError:
    case QNetworkReply::OperationCanceledError:
      return QStringLiteral(
                 "%1 stopped answering during %2 (timed out). Check that the "
                 "engine is running and reachable.")
          .arg(name, what);
    case QNetworkReply::SslHandshakeFailedError:
    case QNetworkReply::UnknownNetworkError:
      if (network_text.contains(QStringLiteral("SSL"), Qt::CaseInsensitive) ||
          network_text.contains(QStringLiteral("TLS"), Qt::CaseInsensitive) ||
          network_error == QNetworkReply::SslHandshakeFailedError) {
        return QStringLiteral(
                   "The TLS connection to %1 failed: %2. Check that the address "
                   "uses the scheme the engine serves (http or https) and that "
                   "its certificate is trusted.")
            .arg(name, network_text);
      }
      break;
    case QNetworkReply::RemoteHostClosedError:
      return QStringLiteral(
                 "%1 closed the connection during %2. Check that the engine is "
                 "still running.")
          .arg(name, what);
    default:
      break;
  }
  return QStringLiteral("%1 could not be reached for %2: %3.").arg(name, what, network_text);
}

struct RemoteClient::Chat {
  QPointer<QNetworkReply> reply;
  RemoteEndpoint endpoint;
  SseDecoder decoder;
  RemoteChatResult result;
  QByteArray body;  // the answer when it is not an event stream
  QElapsedTimer clock;
  qint64 first_text_ns = -1;
  bool in_reasoning = false;
  bool done = false;  // "[DONE]" arrived
  bool stopped = false;
  QString failure;  // set when the stream itself was wrong
};

RemoteClient::RemoteClient(QObject* parent)
    : QObject(parent), network_(new QNetworkAccessManager(this)) {
  qRegisterMetaType<RemoteChatResult>();
  qRegisterMetaType<RemoteModel>();
  qRegisterMetaType<QList<RemoteModel>>();
}

RemoteClient::~RemoteClient() {
  for (const std::shared_ptr<Chat>& chat : std::as_const(chats_)) {
    if (QNetworkReply* reply = chat->reply.data(); reply != nullptr) {
      reply->disconnect(this);
      reply->abort();
    }
  }
}

QNetworkReply* RemoteClient::send(const RemoteEndpoint& endpoint, const QString& path,
                                  const QByteArray* body) {
  QNetworkRequest request(endpoint.url(path));
  request.setTransferTimeout(timeout_ms_);
  request.setRawHeader("Accept", body ? "text/event-stream, application/json" : "application/json");
  if (!endpoint.api_key.isEmpty())
    request.setRawHeader("Authorization", "Bearer " + endpoint.api_key.toUtf8());
  if (!body) return network_->get(request);
  request.setHeader(QNetworkRequest::ContentTypeHeader, QStringLiteral("application/json"));
  return network_->post(request, *body);
}

void RemoteClient::listModels(quint64 request, const RemoteEndpoint& endpoint) {
  QNetworkReply* reply = send(endpoint, QStringLiteral("/v1/models"), nullptr);
  connect(reply, &QNetworkReply::finished, this, [this, reply, request, endpoint] {
    reply->deleteLater();
    const QByteArray body = reply->read(kMaxBody);
    const int status = status_of(*reply);
    if (reply->error() != QNetworkReply::NoError || status != 200) {
      emit listFailed(request, describe_failure(endpoint, QStringLiteral("listing its models"),
                                                status, reply->error(), reply->errorString(),
                                                from_utf8(error_message_of(body.toStdString()))));
      return;
    }
    try {
      const std::vector<RemoteModel> models = parse_model_list(body.toStdString());
      emit modelsListed(request, QList<RemoteModel>(models.begin(), models.end()));
    } catch (const ProtocolError& error) {
      emit listFailed(request,
                      QStringLiteral("%1 did not answer /v1/models as an OpenAI-compatible "
                                     "engine does: %2. Check that the address is the engine's "
                                     "API.")
                          .arg(endpoint.name(), QString::fromUtf8(error.what())));
    }
  });
}

void RemoteClient::startChat(qint64 id, const RemoteEndpoint& endpoint, const QByteArray& body) {
  stop(id);
  auto chat = std::make_shared<Chat>();
  chat->endpoint = endpoint;
  chat->clock.start();
  chat->reply = send(endpoint, QStringLiteral("/v1/chat/completions"), &body);
  chats_.insert(id, chat);
  connect(chat->reply, &QNetworkReply::readyRead, this, [this, id] { onChatData(id); });
  connect(chat->reply, &QNetworkReply::finished, this, [this, id] { onChatDone(id); });
}

void RemoteClient::stop(qint64 id) {
  const auto found = chats_.find(id);
  if (found == chats_.end()) return;
  const std::shared_ptr<Chat> chat = *found;
  chat->stopped = true;
  // finished() follows at once and ends the chat.
  if (chat->reply) chat->reply->abort();
}

void RemoteClient::onChatData(qint64 id) {
  const auto found = chats_.find(id);
  if (found == chats_.end()) return;
  const std::shared_ptr<Chat> chat = *found;
  QNetworkReply& reply = *chat->reply;
  if (status_of(reply) != 200 || !is_event_stream(reply)) {
    chat->body += reply.read(std::max<qsizetype>(0, kMaxBody - chat->body.size()));
    return;
  }
  std::vector<SseEvent> events;
  try {
    events = chat->decoder.feed(reply.readAll().toStdString());
  } catch (const std::length_error& error) {
    chat->failure = QString::fromUtf8(error.what());
    reply.abort();
    return;
  }
  QString shown;
  for (const SseEvent& event : events) {
    if (chat->done) break;
    ChatChunk chunk;
    try {
      chunk = parse_chat_chunk(event.data);
    } catch (const ProtocolError& error) {
      chat->failure = QString::fromUtf8(error.what());
      break;
    }
    if (chunk.error) {
      chat->failure = QStringLiteral("the engine reported an error: ") + from_utf8(*chunk.error);
      break;
    }
    chat->done = chunk.done;
    if (chunk.usage) chat->result.usage = chunk.usage;
    if (chunk.finish_reason) chat->result.finish_reason = from_utf8(*chunk.finish_reason);
    if (chunk.reasoning.empty() && chunk.content.empty()) continue;
    if (chat->first_text_ns < 0) {
      chat->first_text_ns = chat->clock.nsecsElapsed();
      chat->result.time_to_first_token_ms = static_cast<double>(chat->first_text_ns) / 1e6;
    }
    ++chat->result.text_chunks;
    // Reasoning the engine sends apart is shown as local reasoning models
    // write it, inside <think> before the answer.
    if (!chunk.reasoning.empty()) {
      if (!chat->in_reasoning) shown += QStringLiteral("<think>\n");
      chat->in_reasoning = true;
      const QString reasoning = from_utf8(chunk.reasoning);
      chat->result.reasoning += reasoning;
      shown += reasoning;
    }
    if (!chunk.content.empty()) {
      if (chat->in_reasoning) shown += QStringLiteral("\n</think>\n\n");
      chat->in_reasoning = false;
      shown += from_utf8(chunk.content);
    }
  }
  if (!shown.isEmpty()) {
    chat->result.text += shown;
    emit chatText(id, shown);
  }
  if (!chat->failure.isEmpty()) reply.abort();
}

void RemoteClient::onChatDone(qint64 id) {
  const auto found = chats_.find(id);
  if (found == chats_.end()) return;
  const std::shared_ptr<Chat> chat = *found;
  QNetworkReply& reply = *chat->reply;
  reply.deleteLater();
  if (reply.error() == QNetworkReply::NoError) onChatData(id);
  const QString what = QStringLiteral("the reply");
  if (chat->stopped) {
    finishChat(id, QString());
    return;
  }
  if (!chat->failure.isEmpty()) {
    finishChat(id, QStringLiteral("%1 sent a reply Quire cannot read (%2). What arrived is kept.")
                       .arg(chat->endpoint.name(), chat->failure));
    return;
  }
  const int status = status_of(reply);
  if (reply.error() != QNetworkReply::NoError || status != 200) {
    // A stream cut off after it began is said so, with what arrived kept.
    // Qt ends a request that outlived its transfer timeout as cancelled.
    const bool timed_out = reply.error() == QNetworkReply::TimeoutError ||
                           reply.error() == QNetworkReply::OperationCanceledError;
    if (status == 200 && is_event_stream(reply) && !timed_out) {
      finishChat(id, QStringLiteral("The connection to %1 ended before the reply was finished "
                                    "(%2). What arrived is kept.")
                         .arg(chat->endpoint.name(), reply.errorString()));
      return;
    }
    finishChat(id,
               describe_failure(chat->endpoint, what, status, reply.error(), reply.errorString(),
                                from_utf8(error_message_of(chat->body.toStdString()))));
    return;
  }
  if (!is_event_stream(reply)) {
    // An engine that answered the whole reply at once.
    try {
      const ChatChunk whole = parse_chat_completion(chat->body.toStdString());
      if (whole.error) {
        finishChat(id, QStringLiteral("%1 failed the reply: %2")
                           .arg(chat->endpoint.name(), from_utf8(*whole.error)));
        return;
      }
      chat->result.time_to_first_token_ms = static_cast<double>(chat->clock.nsecsElapsed()) / 1e6;
      chat->result.usage = whole.usage;
      chat->result.finish_reason = from_utf8(whole.finish_reason.value_or("stop"));
      QString shown;
      if (!whole.reasoning.empty()) {
        chat->result.reasoning = from_utf8(whole.reasoning);
        shown =
            QStringLiteral("<think>\n") + chat->result.reasoning + QStringLiteral("\n</think>\n\n");
      }
      shown += from_utf8(whole.content);
      chat->result.text = shown;
      if (!shown.isEmpty()) emit chatText(id, shown);
      finishChat(id, QString());
    } catch (const ProtocolError& error) {
      finishChat(id, QStringLiteral("%1 sent a reply Quire cannot read (%2).")
                         .arg(chat->endpoint.name(), QString::fromUtf8(error.what())));
    }
    return;
  }
  chat->decoder.finish();
  if (!chat->done && chat->result.finish_reason.isEmpty()) {
    finishChat(id, QStringLiteral("The connection to %1 ended before the reply was finished. "
                                  "What arrived is kept.")
                       .arg(chat->endpoint.name()));
    return;
  }
  finishChat(id, QString());
}

void RemoteClient::finishChat(qint64 id, const QString& error) {
  const std::shared_ptr<Chat> chat = chats_.take(id);
  if (!chat) return;
  RemoteChatResult& result = chat->result;
  if (chat->stopped) {
    result.finish_reason = QStringLiteral("cancelled");
  } else if (!error.isEmpty()) {
    result.finish_reason = QStringLiteral("error");
    result.error = error;
  } else if (result.finish_reason.isEmpty()) {
    result.finish_reason = QStringLiteral("stop");
  }
  if (chat->first_text_ns >= 0) {
    // The engine's count of generated tokens when it gives one, else one
    // token per chunk that carried text (how the engines stream).
    const double tokens = result.usage ? static_cast<double>(result.usage->completion_tokens)
                                       : static_cast<double>(result.text_chunks);
    const double seconds =
        static_cast<double>(chat->clock.nsecsElapsed() - chat->first_text_ns) / 1e9;
    if (tokens > 1 && seconds > 0) result.tokens_per_second = (tokens - 1) / seconds;
  }
  emit chatFinished(id, result);
}

}  // namespace quire::remote
