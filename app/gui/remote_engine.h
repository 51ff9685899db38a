#pragma once

// A model served by a remote OpenAI-compatible engine, behind the requests
// and answers the chats use for the model run here (engine_messages.h): a
// reply request becomes a streamed chat completion of the conversation's
// text, and its outcome carries the endpoint's own counts (prompt, cached and
// generated tokens) with the time to first token and the rate measured here.
// Lives on the GUI thread; nothing blocks.

#include <QObject>
#include <QString>
#include <map>
#include <optional>

#include "engine_messages.h"
#include "quire/remote/remote_client.h"

namespace quire::remote {
class ApiKeyStore;
}

namespace quire::gui {

class RemoteEngine : public QObject {
  Q_OBJECT

 public:
  explicit RemoteEngine(remote::ApiKeyStore& keys, QObject* parent = nullptr);
  ~RemoteEngine() override;

  // Reads the endpoint's key, lists its models and picks settings.remote_model
  // (or the first it serves); connected or connectFailed answers with `id`.
  // The connection before stays in use until then.
  void connectTo(quint64 id, const ui::EngineSettings& settings);
  // Drops the answer of a connection in flight.
  void cancelConnect() { pending_ = 0; }
  // Stops every reply and forgets the endpoint.
  void disconnectEndpoint();
  bool isConnected() const { return model_.has_value(); }

  void startReply(const ReplyRequest& request);
  void stopReply(qint64 reply_id);
  int running() const { return static_cast<int>(replies_.size()); }
  bool isRunning(qint64 reply_id) const { return replies_.count(reply_id) > 0; }

  // Lists the models of the engine at `url` for the settings; modelsListedFor answers.
  void listModelsAt(const QString& url, const QString& key);

  // How long the endpoint may stay silent before a reply fails.
  void setTransferTimeout(int milliseconds) { client_.setTransferTimeout(milliseconds); }

 signals:
  void connected(quint64 id, const quire::gui::ModelInfo& info);
  void connectFailed(quint64 id, const quire::gui::EngineFailure& failure);
  void replyText(qint64 reply_id, const QString& delta);
  void replyFinished(const quire::gui::ReplyOutcome& outcome);
  void busyChanged(bool busy);
  // listModelsAt's answer: the models, or why there are none.
  void modelsListedFor(const QStringList& models, const QString& problem);

 private:
  struct Model {
    remote::RemoteEndpoint endpoint;
    remote::RemoteModel served;  // as the engine listed it
  };

  void onListed(quint64 id, const QList<remote::RemoteModel>& models);
  void onListFailed(quint64 id, const QString& message);
  void onFinished(qint64 reply_id, const remote::RemoteChatResult& result);
  void stopAll();

  remote::ApiKeyStore& keys_;
  remote::RemoteClient client_;
  remote::RemoteClient lister_;  // listModelsAt's, apart from the connections' lists
  quint64 pending_ = 0;          // the connection in flight, 0: none
  quint64 listing_ = 0;          // the latest listModelsAt; earlier answers are dropped
  ui::EngineSettings pending_settings_;
  remote::RemoteEndpoint pending_endpoint_;
  std::optional<Model> model_;
  std::map<qint64, qint64> replies_;  // chat id by reply id
};

}  // namespace quire::gui
