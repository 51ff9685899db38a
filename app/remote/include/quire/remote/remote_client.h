#pragma once

// The client of a remote OpenAI-compatible engine: lists its models and
// streams chat completions over HTTP(S) with Qt Network, on the thread that
// owns it (the GUI thread; nothing here blocks). Each failure becomes one
// message that names the endpoint, what happened and what to do, and a reply
// that fails or is stopped keeps the text that arrived.

#include <QElapsedTimer>
#include <QHash>
#include <QList>
#include <QObject>
#include <QPointer>
#include <QString>
#include <QUrl>
#include <memory>
#include <optional>

#include "quire/remote/openai_stream.h"

class QNetworkAccessManager;
class QNetworkReply;

namespace quire::remote {

class SseDecoder;

struct RemoteEndpoint {
  QUrl base;  // scheme, host, port and any path before /v1
  QString api_key;

  // The endpoint's URL for `path` ("/v1/models"), below base's path.
  QUrl url(const QString& path) const;
  // "host:port" as people read it in messages.
  QString name() const;
};

// The endpoint a user typed ("localhost:8000", "http://gpu-box:8000/v1/",
// "https://example.org/api") as a base URL: http:// when no scheme is given,
// without a trailing "/v1" or "/". Returns nullopt and sets `error` when it
// is not an http(s) URL with a host.
std::optional<QUrl> endpoint_base_url(const QString& typed, QString* error);

struct RemoteChatResult {
  QString text;       // the reply as it arrived, even when it failed
  QString reasoning;  // the model's reasoning, when the engine sends it apart
  // "stop", "length" or another reason the engine gave; "cancelled" when
  // stopped here; "error" when it failed (error says why).
  QString finish_reason;
  QString error;
  std::optional<StreamUsage> usage;
  double time_to_first_token_ms = 0;
  double tokens_per_second = 0;  // after the first token, by the engine's count when it gives one
  int text_chunks = 0;           // chunks that added text
};

class RemoteClient : public QObject {
  Q_OBJECT

 public:
  explicit RemoteClient(QObject* parent = nullptr);
  ~RemoteClient() override;

  // How long the endpoint may stay silent before a request fails.
  void setTransferTimeout(int milliseconds) { timeout_ms_ = milliseconds; }

  // GET /v1/models; modelsListed or listFailed answers with `request`.
  void listModels(quint64 request, const RemoteEndpoint& endpoint);
  // POST /v1/chat/completions with `body` (chat_request_body()); chatText
  // carries the reply as it streams, chatFinished ends it, both with `id`.
  void startChat(qint64 id, const RemoteEndpoint& endpoint, const QByteArray& body);
  // Aborts the request: chatFinished follows with "cancelled" and the text so far.
  void stop(qint64 id);
  bool isRunning(qint64 id) const { return chats_.contains(id); }
  int running() const { return static_cast<int>(chats_.size()); }

 signals:
  void modelsListed(quint64 request, const QList<quire::remote::RemoteModel>& models);
  void listFailed(quint64 request, const QString& message);
  void chatText(qint64 id, const QString& delta);
  void chatFinished(qint64 id, const quire::remote::RemoteChatResult& result);

 private:
  struct Chat;

  QNetworkReply* send(const RemoteEndpoint& endpoint, const QString& path, const QByteArray* body);
  void onChatData(qint64 id);
  void onChatDone(qint64 id);
  void finishChat(qint64 id, const QString& error);

  QNetworkAccessManager* network_ = nullptr;
  int timeout_ms_ = 300'000;
  QHash<qint64, std::shared_ptr<Chat>> chats_;
};

// The message for a request that failed, as people should read it.
// `status` is the HTTP status (0: none), `body_message` what the engine said
// (error_message_of()), `network_error` Qt's error text.
QString describe_failure(const RemoteEndpoint& endpoint, const QString& what, int status,
                         int network_error, const QString& network_text,
                         const QString& body_message);

}  // namespace quire::remote

Q_DECLARE_METATYPE(quire::remote::RemoteChatResult)
Q_DECLARE_METATYPE(quire::remote::RemoteModel)
