#pragma once

// The engine's side of the application. An EngineWorker is moved to its own
// QThread and reached only through queued signals and slots: it owns the
// backend, the model, the tokenizer, the runtime with its cache and the
// generator, and nothing of it is touched from the GUI thread.
//
// Replies of several chats run at once: each request becomes a job of the one
// generator, which batches them. The worker steps the generator from its own
// event loop, one step per event, so requests and stops that arrive meanwhile
// are seen between two steps. While it is busy it publishes a memory snapshot
// a few times a second.
//
// When Settings → Server is on, the worker also runs the OpenAI-compatible
// server for the loaded model (AppServer): API requests become jobs of the
// same generator, taken between two steps, so they share the chats' batches
// and prefix cache. The server starts after a model loads and stops (its
// requests ended) before the model is unloaded or replaced.

#include <QElapsedTimer>
#include <QObject>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "engine_messages.h"
#include "quire/engine/generator/conversation.h"
#include "quire/engine/generator/generator.h"
#include "quire/ui/memory_view_data.h"

namespace quire::gui {

class AppServer;
class ConversationBook;
class ToolReplyReader;

class EngineWorker : public QObject {
  Q_OBJECT

 public:
  // Snapshots while generating: often enough for the page map to look live,
  // rarely enough to cost nothing next to a decode step.
  static constexpr int kSnapshotIntervalMs = 250;

  explicit EngineWorker(QObject* parent = nullptr);
  ~EngineWorker() override;

 public slots:
  // Reads and checks the new folder (config.json, every tensor header, the
  // tokenizer) while the model before keeps serving, and fails without
  // touching it when that goes wrong. Then ends every reply (as cancelled),
  // unloads the model before and loads the new one; if that fails, the model
  // before is loaded again (modelRestored) before loadFailed is sent.
  void loadModel(const quire::gui::LoadRequest& request);
  void unloadModel();
  void startReply(const quire::gui::ReplyRequest& request);
  void stopReply(qint64 reply_id);
  // The chat was deleted or edited: its conversation is built again next time.
  void forgetChat(qint64 chat_id);
  void publishSnapshot();
  // Settings → Server. Starts, stops or moves the server as they say; it
  // serves only while a model is loaded.
  void setServer(const quire::ui::ServerSettings& settings);
  // Settings → Speculative decoding, for the server's requests (a chat's
  // reply brings its own, ReplyRequest::drafts).
  void setServerDrafts(const quire::ui::DraftDefaults& drafts);
  // The library the server's requests name presets from.
  void setServerPresets(const QString& dir);
  // Settings → Disk cache, live: opens or closes the loaded model's disk
  // tier, or changes its limit (engine_worker_disk.cpp).
  void setDiskCache(const quire::gui::DiskCacheRequest& request);
  // Disk cache → Clear: the loaded model's pages, then every other model's
  // under `root`. diskCacheCleared answers.
  void clearDiskCache(const QString& root);

 signals:
  void loadProgress(quint64 load_id, qint64 done, qint64 total);
  void modelLoaded(quint64 load_id, const quire::gui::ModelInfo& info);
  void loadFailed(quint64 load_id, const quire::gui::EngineFailure& failure);
  void modelUnloaded();
  void modelRestored(const quire::gui::ModelInfo& info);
  void replyText(qint64 reply_id, const QString& delta);
  void replyFinished(const quire::gui::ReplyOutcome& outcome);
  void snapshotReady(const quire::ui::MemorySnapshotView& snapshot);
  // Whether any reply is queued or running.
  void busyChanged(bool busy);
  // A step ran short of device memory and replies went on: what happened,
  // in a sentence for the status bar. Sent once per model for each kind of
  // measure (running again, running fewer at once, ending a reply).
  void memoryRecovered(const QString& text);
  // The server started, stopped, failed to start, or its requests in flight
  // changed.
  void serverStatus(const quire::ui::ServerStatusView& status);
  // The loaded model's disk tier was opened (its identity) or closed
  // (empty), or could not be opened (`notice` says why).
  void diskTierChanged(const QString& identity, const QString& notice, bool notice_is_error);
  // Something the user should know that is not a reply's: the disk filled
  // up and the disk tier stopped writing, or the cache could not be archived.
  void notice(const QString& text);
  // Clear finished; `error` is empty when every page file went.
  void diskCacheCleared(const QString& error);

 private:
  struct Loaded;
  struct Active {
    qint64 reply_id = 0;
    qint64 chat_id = 0;
    qint64 context_limit = 0;
    QList<RenderedMessage> rendered;
    QString render_key;
    QString format_request;  // the book (prompt format setting) it was begun in
    // Reads the reply for tool calls when the chat offers tools (or the
    // model writes Harmony's channels); null otherwise.
    std::shared_ptr<ToolReplyReader> reader;
    // What the chat's context policy dropped for this reply, under which policy.
    std::optional<engine::Trimmed> trimmed;
    QString context_overflow;
    qint64 context_reserve = 0;
  };

  void schedulePump();
  void pump();
  void settleFinished();
  void finishActive(const Active& active, const engine::JobResult& result);
  void failReply(const ReplyRequest& request, const EngineFailure& failure);
  void recoverFromStepFailure(const EngineFailure& failure);
  void reportMemoryRecovery();
  void endAllReplies();
  void setBusy(bool busy);
  std::unique_ptr<Loaded> prepare(const LoadRequest& request);
  void complete(Loaded& loaded);
  // The draft model the settings choose, beside the loaded model; one that
  // cannot load leaves a notice in loaded.info instead.
  void loadDraftModel(Loaded& loaded);
  void restore(LoadRequest previous, EngineFailure& failure);
  // The server (engine_worker_server.cpp).
  void startServer();
  // Refuses new requests, ends those in flight (cancelled) and closes the port.
  void stopServer();
  // Requests and cancellations that came in since the last step.
  void takeServerJobs();
  void publishServerStatus();
  // The disk tier (engine_worker_disk.cpp). Opens the tier the load's
  // request asks for; a failure becomes loaded.info.disk_notice.
  void openDiskTier(Loaded& loaded);
  // Writes the device cache's pages to the disk tier, for an unload, a
  // switch or a quit; a write error is told (notice) when `tell_failure`.
  void archiveCache(bool tell_failure);
  // Reads the tier's folder for the memory panel and says once that the
  // disk is full. Not per step: it scans the folder.
  void refreshDiskStatus();

  std::unique_ptr<Loaded> loaded_;
  std::map<engine::JobId, Active> active_;
  // Jobs the generator finished during the last step, settled after it.
  std::vector<engine::JobResult> finished_;
  bool pump_queued_ = false;
  bool busy_ = false;
  // The most the generator has had to do about memory that the user was told.
  engine::MemoryRecoveries::Action memory_reported_ = engine::MemoryRecoveries::Action::None;
  QElapsedTimer since_snapshot_;
  ui::ServerSettings server_settings_;
  ui::DraftDefaults server_drafts_;
  QString server_presets_dir_;
  std::unique_ptr<AppServer> server_;
  QString server_failure_;  // why the server could not start
  ui::ServerStatusView server_status_;
  // The disk tier's figures at the last refreshDiskStatus.
  ui::DiskTierView disk_view_;
  bool disk_full_reported_ = false;
};

}  // namespace quire::gui
