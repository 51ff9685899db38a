#include "engine_host.h"

#include "engine_worker.h"
#include "remote_engine.h"

namespace quire::gui {

EngineHost::EngineHost(remote::ApiKeyStore& keys, QObject* parent)
    : QObject(parent), remote_(std::make_unique<RemoteEngine>(keys)) {
  register_engine_message_types();
  thread_.setObjectName(QStringLiteral("quire-engine"));
  worker_ = new EngineWorker;
  worker_->moveToThread(&thread_);
  connect(&thread_, &QThread::finished, worker_, &QObject::deleteLater);

  connect(this, &EngineHost::loadRequested, worker_, &EngineWorker::loadModel);
  connect(this, &EngineHost::unloadRequested, worker_, &EngineWorker::unloadModel);
  connect(this, &EngineHost::replyRequested, worker_, &EngineWorker::startReply);
  connect(this, &EngineHost::stopRequested, worker_, &EngineWorker::stopReply);
  connect(this, &EngineHost::forgetRequested, worker_, &EngineWorker::forgetChat);
  connect(this, &EngineHost::snapshotRequested, worker_, &EngineWorker::publishSnapshot);
  connect(this, &EngineHost::serverRequested, worker_, &EngineWorker::setServer);
  connect(this, &EngineHost::serverDraftsRequested, worker_, &EngineWorker::setServerDrafts);
  connect(this, &EngineHost::serverPresetsRequested, worker_, &EngineWorker::setServerPresets);
  connect(this, &EngineHost::diskCacheRequested, worker_, &EngineWorker::setDiskCache);
  connect(this, &EngineHost::clearDiskCacheRequested, worker_, &EngineWorker::clearDiskCache);

  connect(worker_, &EngineWorker::loadProgress, this, &EngineHost::onLoadProgress);
  connect(worker_, &EngineWorker::modelLoaded, this, &EngineHost::onModelLoaded);
  connect(worker_, &EngineWorker::loadFailed, this, &EngineHost::onLoadFailed);
  connect(worker_, &EngineWorker::modelUnloaded, this, &EngineHost::onModelUnloaded);
  connect(worker_, &EngineWorker::modelRestored, this, &EngineHost::onModelRestored);
  connect(worker_, &EngineWorker::replyText, this, &EngineHost::replyText);
  connect(worker_, &EngineWorker::replyFinished, this, &EngineHost::replyFinished);
  connect(worker_, &EngineWorker::snapshotReady, this, &EngineHost::snapshotReady);
  connect(worker_, &EngineWorker::busyChanged, this, &EngineHost::onBusyChanged);
  connect(worker_, &EngineWorker::memoryRecovered, this, &EngineHost::memoryRecovered);
  connect(worker_, &EngineWorker::notice, this, &EngineHost::notice);
  connect(worker_, &EngineWorker::diskCacheCleared, this, &EngineHost::diskCacheCleared);
  connect(worker_, &EngineWorker::diskTierChanged, this,
          [this](const QString& identity, const QString& notice, bool notice_is_error) {
            if (!model_ || isRemote()) return;
            model_->disk_identity = identity;
            model_->disk_notice = notice;
            model_->disk_notice_is_error = notice_is_error;
            emit diskTierChanged(notice, notice_is_error);
          });
  connect(worker_, &EngineWorker::serverStatus, this, [this](const ui::ServerStatusView& status) {
    server_ = status;
    emit serverStatus(status);
  });
  RemoteEngine* remote = remote_.get();
  connect(remote, &RemoteEngine::connected, this, &EngineHost::onRemoteConnected);
  connect(remote, &RemoteEngine::connectFailed, this, &EngineHost::onLoadFailed);
  connect(remote, &RemoteEngine::replyText, this, &EngineHost::replyText);
  connect(remote, &RemoteEngine::replyFinished, this, &EngineHost::replyFinished);
  connect(remote, &RemoteEngine::busyChanged, this, &EngineHost::onBusyChanged);
  thread_.start();
}

EngineHost::~EngineHost() {
  if (loading_) loading_->cancel->store(true);
  // The worker is destroyed on its own thread once its event loop ends; it
  // takes the generator, the runtime and the backend with it.
  thread_.quit();
  thread_.wait();
}

quint64 EngineHost::load(const ui::EngineSettings& settings, const DeviceLists& devices) {
  cancelLoad();
  LoadRequest request;
  request.id = next_load_++;
  request.settings = settings;
  request.devices = devices;
  request.disk_cache = disk_cache_;
  request.cancel = std::make_shared<std::atomic<bool>>(false);
  loading_ = PendingLoad{request.id, request.cancel};
  if (ui::is_remote(settings)) {
    emit loadStarted(settings.remote_url);
    remote_->connectTo(request.id, settings);
    return request.id;
  }
  emit loadStarted(settings.model_directory);
  emit loadRequested(request);
  return request.id;
}

void EngineHost::cancelLoad() {
  if (!loading_) return;
  loading_->cancel->store(true);
  remote_->cancelConnect();
  // The worker still answers for the cancelled load; the handlers drop it.
  loading_.reset();
  emit loadFailed(EngineFailure{EngineFailure::Kind::Cancelled,
                                QStringLiteral("Loading was cancelled"), QString(), QString()});
}

bool EngineHost::isRemote() const {
  return remote_->isConnected();
}

void EngineHost::unload() {
  cancelLoad();
  if (isRemote()) {
    remote_->disconnectEndpoint();
    model_.reset();
    emit modelUnloaded();
    return;
  }
  emit unloadRequested();
}

void EngineHost::startReply(const ReplyRequest& request) {
  if (isRemote()) {
    remote_->startReply(request);
    return;
  }
  emit replyRequested(request);
}

void EngineHost::stopReply(qint64 reply_id) {
  if (remote_->isRunning(reply_id)) {
    remote_->stopReply(reply_id);
    return;
  }
  emit stopRequested(reply_id);
}

void EngineHost::forgetChat(qint64 chat_id) {
  emit forgetRequested(chat_id);
}

void EngineHost::requestSnapshot() {
  // A remote engine's memory is on its own machine: nothing here to draw.
  if (isRemote()) {
    emit snapshotReady(ui::MemorySnapshotView{});
    return;
  }
  emit snapshotRequested();
}

void EngineHost::configureServer(const ui::ServerSettings& settings) {
  emit serverRequested(settings);
}

void EngineHost::configureServerDrafts(const ui::DraftDefaults& drafts) {
  emit serverDraftsRequested(drafts);
}

void EngineHost::configureServerPresets(const QString& dir) {
  emit serverPresetsRequested(dir);
}

void EngineHost::configureDiskCache(const DiskCacheRequest& request) {
  disk_cache_ = request;
  emit diskCacheRequested(request);
}

void EngineHost::clearDiskCache() {
  emit clearDiskCacheRequested(disk_cache_.root);
}

void EngineHost::onLoadProgress(quint64 id, qint64 done, qint64 total) {
  if (loading_ && loading_->id == id) emit loadProgress(done, total);
}

void EngineHost::onModelLoaded(quint64 id, const ModelInfo& info) {
  if (!loading_ || loading_->id != id) {
    // Cancelled too late to stop it: the worker serves it now. Unless a
    // newer load replaces it, it must not stay loaded behind the window's
    // back.
    if (isRemote() || !loading_) {
      emit unloadRequested();
      if (isRemote()) return;
    }
    model_ = info;
    return;
  }
  loading_.reset();
  // A model run here replaces the remote one.
  if (isRemote()) remote_->disconnectEndpoint();
  model_ = info;
  emit modelLoaded(info);
}

void EngineHost::onRemoteConnected(quint64 id, const ModelInfo& info) {
  if (!loading_ || loading_->id != id) return;
  loading_.reset();
  // The engine is connected now; the model before it may have run here.
  const bool local_loaded = model_.has_value() && model_->backend != QLatin1String("remote");
  model_ = info;
  // The model run here gives its memory back; its unloading is not the
  // remote model's.
  if (local_loaded) emit unloadRequested();
  emit modelLoaded(info);
}

void EngineHost::onLoadFailed(quint64 id, const EngineFailure& failure) {
  if (!loading_ || loading_->id != id) return;
  loading_.reset();
  emit loadFailed(failure);
}

void EngineHost::onModelUnloaded() {
  if (!model_ || isRemote()) return;
  model_.reset();
  emit modelUnloaded();
}

void EngineHost::onModelRestored(const ModelInfo& info) {
  if (isRemote()) return;
  model_ = info;
  emit modelRestored(info);
}

void EngineHost::onBusyChanged(bool busy) {
  busy_ = busy;
  emit busyChanged(busy);
}

}  // namespace quire::gui
