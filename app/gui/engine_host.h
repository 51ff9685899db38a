#pragma once

// The GUI thread's handle on the engine: starts the worker thread, forwards
// requests to the EngineWorker through queued signals and re-emits its
// answers, dropping those of loads that were superseded or cancelled.

#include <QObject>
#include <QThread>
#include <atomic>
#include <memory>
#include <optional>

#include "engine_messages.h"
#include "quire/ui/memory_view_data.h"

namespace quire::remote {
class ApiKeyStore;
}

namespace quire::gui {

class EngineWorker;
class RemoteEngine;

class EngineHost : public QObject {
  Q_OBJECT

 public:
  // `keys` holds the API keys of remote engines (settings' remote_url); it
  // outlives the host.
  explicit EngineHost(remote::ApiKeyStore& keys, QObject* parent = nullptr);
  // Stops the thread: a load in flight is cancelled, replies end unsaved,
  // and it waits while the worker writes the cache's pages to the disk tier.
  ~EngineHost() override;

  // Loads a model with `settings` on a backend over `devices`; a load
  // already in flight is cancelled first. Returns the load's id. The model
  // loaded before serves until the worker unloads it, which it does only
  // once the new folder has been read and checked; if the new model then
  // fails to load, the worker loads the old one again (modelRestored).
  // Settings with a remote_url connect to that engine instead (RemoteEngine):
  // the same answers follow, and the model run here is unloaded once the
  // remote one is connected.
  quint64 load(const ui::EngineSettings& settings, const DeviceLists& devices);
  void cancelLoad();
  void unload();
  bool isLoading() const { return loading_.has_value(); }
  // The model the worker serves now, if any (while a load is in flight: the
  // model before it, until the worker unloads that one).
  const std::optional<ModelInfo>& model() const { return model_; }
  bool isBusy() const { return busy_; }
  // The model is served by a remote engine.
  bool isRemote() const;
  RemoteEngine& remoteEngine() { return *remote_; }

  void startReply(const ReplyRequest& request);
  void stopReply(qint64 reply_id);
  void forgetChat(qint64 chat_id);
  void requestSnapshot();
  // Settings → Server; serverStatus answers.
  void configureServer(const ui::ServerSettings& settings);
  // Settings → Speculative decoding, for the server's requests.
  void configureServerDrafts(const ui::DraftDefaults& drafts);
  // The folder of presets the API server's requests may name; takes effect
  // when the server next starts.
  void configureServerPresets(const QString& dir);
  const ui::ServerStatusView& serverState() const { return server_; }
  // Settings → Disk cache: given to every load from now on, and to the
  // model loaded now (live: the tier opens, closes or takes the new limit).
  void configureDiskCache(const DiskCacheRequest& request);
  const DiskCacheRequest& diskCache() const { return disk_cache_; }
  // Disk cache → Clear, on the engine thread (the loaded model's tier knows
  // its pages); diskCacheCleared answers.
  void clearDiskCache();

 signals:
  void loadStarted(const QString& directory);
  void loadProgress(qint64 done, qint64 total);
  void modelLoaded(const quire::gui::ModelInfo& info);
  void loadFailed(const quire::gui::EngineFailure& failure);
  void modelUnloaded();
  // A new model failed to load after the one before was unloaded, and that
  // one was loaded again; loadFailed follows for the new one.
  void modelRestored(const quire::gui::ModelInfo& info);
  void replyText(qint64 reply_id, const QString& delta);
  void replyFinished(const quire::gui::ReplyOutcome& outcome);
  void snapshotReady(const quire::ui::MemorySnapshotView& snapshot);
  void busyChanged(bool busy);
  // Memory ran short in a step and replies went on (EngineWorker::memoryRecovered).
  void memoryRecovered(const QString& text);
  // The server inside the application started, stopped, could not start, or
  // its requests in flight changed.
  void serverStatus(const quire::ui::ServerStatusView& status);
  // The loaded model's disk tier opened or closed (model().disk_identity),
  // or could not open (`notice`).
  void diskTierChanged(const QString& notice, bool notice_is_error);
  void diskCacheCleared(const QString& error);
  // EngineWorker::notice: the disk filled up, an archive failed.
  void notice(const QString& text);

  // To the worker (queued: it lives on the engine thread).
  void loadRequested(const quire::gui::LoadRequest& request);
  void unloadRequested();
  void replyRequested(const quire::gui::ReplyRequest& request);
  void stopRequested(qint64 reply_id);
  void forgetRequested(qint64 chat_id);
  void snapshotRequested();
  void serverRequested(const quire::ui::ServerSettings& settings);
  void serverDraftsRequested(const quire::ui::DraftDefaults& drafts);
  void serverPresetsRequested(const QString& dir);
  void diskCacheRequested(const quire::gui::DiskCacheRequest& request);
  void clearDiskCacheRequested(const QString& root);

 private:
  struct PendingLoad {
    quint64 id = 0;
    std::shared_ptr<std::atomic<bool>> cancel;
  };

  void onLoadProgress(quint64 id, qint64 done, qint64 total);
  void onModelLoaded(quint64 id, const ModelInfo& info);
  void onLoadFailed(quint64 id, const EngineFailure& failure);
  void onModelUnloaded();
  void onModelRestored(const ModelInfo& info);
  void onBusyChanged(bool busy);
  void onRemoteConnected(quint64 id, const ModelInfo& info);

  QThread thread_;
  EngineWorker* worker_ = nullptr;
  quint64 next_load_ = 1;
  std::optional<PendingLoad> loading_;
  std::optional<ModelInfo> model_;
  bool busy_ = false;
  ui::ServerStatusView server_;
  DiskCacheRequest disk_cache_;
  std::unique_ptr<RemoteEngine> remote_;
};

}  // namespace quire::gui
