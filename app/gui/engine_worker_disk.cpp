// The engine worker's disk tier: opened when a model loads, changed and
// cleared from Settings, archived before the model goes (unload, switch,
// quit) so that the next start finds the chats' pages.

#include <algorithm>
#include <exception>
#include <filesystem>
#include <stdexcept>

#include "engine_worker.h"
#include "engine_worker_loaded.h"
#include "quire/engine/disk_cache/disk_cache_usage.h"
#include "quire/engine/runtime/disk_tier.h"

namespace quire::gui {

namespace {

engine::DiskTierOptions disk_tier_options(const DiskCacheRequest& request) {
  engine::DiskTierOptions options;
  options.root = std::filesystem::path(request.root.toStdString());
  options.limit_bytes = static_cast<std::uint64_t>(request.limit_bytes);
  options.file_ops = request.file_ops.get();
  return options;
}

}  // namespace

void EngineWorker::openDiskTier(Loaded& loaded) {
  const DiskCacheRequest& request = loaded.request.disk_cache;
  loaded.info.disk_identity.clear();
  loaded.info.disk_notice.clear();
  loaded.info.disk_notice_is_error = false;
  if (!request.enabled || request.root.isEmpty()) return;
  try {
    const engine::DiskTier& tier = loaded.runtime->open_disk_tier(disk_tier_options(request));
    loaded.info.disk_identity = QString::fromStdString(tier.model().hex());
  } catch (const std::invalid_argument& error) {
    // A cache the tier cannot keep yet (the window pool of a Gemma 2/3
    // model): nothing the user did wrong, and nothing to do.
    loaded.info.disk_notice =
        tr("Chats with this model are not kept on disk: %1. They are kept in memory while "
           "Quire runs.")
            .arg(QString::fromStdString(error.what()));
  } catch (const std::exception& error) {
    // The model runs without it: the tier saves time, it is not the reply.
    loaded.info.disk_notice =
        tr("The disk cache could not be opened: %1. Chats are kept in memory only until Quire "
           "quits; make the folder writable, or turn the disk cache off in Settings → Disk "
           "cache.")
            .arg(QString::fromStdString(error.what()));
    loaded.info.disk_notice_is_error = true;
  }
}

void EngineWorker::archiveCache(bool tell_failure) {
  if (!loaded_ || loaded_->runtime->disk_tier() == nullptr) return;
  QString failure;
  try {
    const engine::ArchiveResult result = loaded_->runtime->archive_cache();
    failure = QString::fromStdString(result.error);
  } catch (const std::exception& error) {
    failure = QString::fromStdString(error.what());
  }
  // A full disk was told already, once.
  if (tell_failure && !failure.isEmpty() && !disk_full_reported_) {
    emit notice(tr("The chats' cache pages could not all be written to disk: %1. Those chats "
                   "are computed again when resumed.")
                    .arg(failure));
  }
}

void EngineWorker::refreshDiskStatus() {
  disk_view_ = ui::DiskTierView{};
  if (!loaded_ || loaded_->runtime->disk_tier() == nullptr) return;
  engine::DiskTierStatus status;
  try {
    status = loaded_->runtime->disk_tier()->status();
  } catch (const std::exception&) {
    // A folder that cannot be scanned now shows as open with nothing in it;
    // its writes say what went wrong.
  }
  disk_view_.enabled = true;
  disk_view_.used_bytes = static_cast<qint64>(status.usage.bytes);
  disk_view_.pages = static_cast<qint64>(status.usage.pages);
  // The user's limit, every model's pages together (this model's share of
  // it, status.limit_bytes, shrinks as other models' pages take room).
  disk_view_.limit_bytes = loaded_->request.disk_cache.limit_bytes;
  if (status.writer.disk_full && !disk_full_reported_) {
    disk_full_reported_ = true;
    emit notice(tr("The disk cache stopped: %1. Replies go on; free some disk space, or lower "
                   "the limit in Settings → Disk cache, and load the model again.")
                    .arg(QString::fromStdString(status.writer.notice)));
  }
}

void EngineWorker::setDiskCache(const DiskCacheRequest& request) {
  if (!loaded_) return;
  Loaded& loaded = *loaded_;
  const DiskCacheRequest before = loaded.request.disk_cache;
  loaded.request.disk_cache = request;
  if (request == before) return;
  engine::DiskTier* tier = loaded.runtime->disk_tier();
  const bool reopen = !request.enabled || request.root != before.root;
  if (tier != nullptr && reopen) {
    loaded.runtime->close_disk_tier();
    tier = nullptr;
  }
  if (tier != nullptr) {
    // The limit is the whole folder's: other models' pages give way first.
    try {
      tier->set_limit(static_cast<std::uint64_t>(request.limit_bytes));
    } catch (const std::exception& error) {
      emit notice(tr("The disk cache's new limit could not be applied: %1. It applies when the "
                     "model is loaded again.")
                      .arg(QString::fromStdString(error.what())));
    }
  } else {
    openDiskTier(loaded);
    disk_full_reported_ = false;
  }
  emit diskTierChanged(loaded.info.disk_identity, loaded.info.disk_notice,
                       loaded.info.disk_notice_is_error);
  refreshDiskStatus();
  publishSnapshot();
}

void EngineWorker::clearDiskCache(const QString& root) {
  QString error;
  try {
    if (loaded_ && loaded_->runtime->disk_tier() != nullptr) {
      // Pages still queued would be written after the clear otherwise.
      engine::DiskTier& tier = *loaded_->runtime->disk_tier();
      tier.flush();
      tier.clear();
    }
    if (!root.isEmpty()) engine::disk_cache::clear_all_models(root.toStdString());
  } catch (const std::exception& failure) {
    error = QString::fromStdString(failure.what());
  }
  refreshDiskStatus();
  publishSnapshot();
  emit diskCacheCleared(error);
}

}  // namespace quire::gui
