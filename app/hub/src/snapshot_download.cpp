#include "quire/hub/snapshot_download.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <QStorageInfo>
#include <filesystem>

#include "quire/hub/hub_client.h"
#include "quire/hub/hub_error.h"

namespace quire::hub {
namespace fs = std::filesystem;
namespace {

// The cache's root, or the nearest folder above it that exists (before the
// first download the root may not be there yet).
QString existing_folder(fs::path path) {
  std::error_code error;
  while (!path.empty() && !fs::exists(path, error) && path.has_parent_path() &&
         path.parent_path() != path)
    path = path.parent_path();
  return QString::fromStdString(path.string());
}

QString human_size(qint64 bytes) {
  const double gib = static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0);
  if (gib >= 1) return QStringLiteral("%1 GiB").arg(gib, 0, 'f', 1);
  return QStringLiteral("%1 MiB").arg(static_cast<double>(bytes) / (1024.0 * 1024.0), 0, 'f', 1);
}

}  // namespace

void discard_partials(const HubCache& cache, const std::string& repo,
                      const std::vector<std::string>& etags) {
  for (const std::string& etag : etags) {
    fs::path partial;
    fs::path lock;
    try {
      partial = cache.incomplete_path(repo, etag);
      lock = cache.lock_path(repo, etag);
    } catch (const HubProtocolError&) {
      continue;
    }
    std::error_code error;
    if (!fs::exists(partial, error)) continue;
    // The lock huggingface_hub and FileDownload take while they write.
    const int fd = ::open(lock.c_str(), O_RDWR | O_CLOEXEC);
    if (fd >= 0 && ::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      ::close(fd);
      continue;
    }
    fs::remove(partial, error);
    if (fd >= 0) {
      ::flock(fd, LOCK_UN);
      ::close(fd);
    }
  }
}

SnapshotDownload::SnapshotDownload(HubClient* client, HubCache cache, SnapshotRequest request,
                                   SnapshotOptions options, QObject* parent)
    : QObject(parent),
      client_(client),
      cache_(std::move(cache)),
      request_(std::move(request)),
      options_(std::move(options)) {
  if (!options_.free_bytes)
    options_.free_bytes = [](const QString& folder) {
      return QStorageInfo(folder).bytesAvailable();
    };
  options_.parallel_files = std::max(1, options_.parallel_files);
}

SnapshotDownload::~SnapshotDownload() {
  over_ = true;
  for (FileDownload* download : running_)
    download->stop();
}

void SnapshotDownload::start() {
  const std::string repo = request_.repo.toStdString();
  if (!is_valid_repo_id(repo)) {
    failAll(QStringLiteral("\"%1\" is not a repository name such as org/name.").arg(request_.repo));
    return;
  }
  if (request_.revision.isEmpty()) request_.revision = QStringLiteral("main");
  if (client_->settings().offline) {
    std::optional<fs::path> folder;
    try {
      folder = cache_.find_snapshot(repo, request_.revision.toStdString());
    } catch (const HubProtocolError&) {
    }
    if (folder) {
      over_ = true;
      emit finished(QString::fromStdString(folder->string()));
    } else {
      failAll(QStringLiteral("HF_HUB_OFFLINE is set and %1 at %2 is not in the cache %3.")
                  .arg(request_.repo, request_.revision,
                       QString::fromStdString(cache_.root().string())));
    }
    return;
  }
  client_->modelInfo(request_.repo, request_.revision,
                     [this](std::optional<ModelInfo> info, const QString& error) {
                       if (over_) return;
                       if (!info)
                         failAll(error);
                       else
                         onInfo(*info);
                     });
}

void SnapshotDownload::onInfo(const ModelInfo& info) {
  const std::string repo = request_.repo.toStdString();
  if (!is_commit_hash(info.sha)) {
    failAll(QStringLiteral("The Hub did not say which commit %1 is at (sha \"%2\").")
                .arg(request_.revision, QString::fromStdString(info.sha)));
    return;
  }
  commit_ = QString::fromStdString(info.sha);
  qint64 needed = 0;
  // Every name is checked before anything is written.
  try {
    for (const RepoFile& file : info.files) {
      if (!request_.filter.accepts(file.path)) continue;
      checked_repo_path(file.path);
      cache_.blob_path(repo, file.etag());
      if (file.size < 0)
        throw HubProtocolError("The Hub did not give the size of " + file.path + ".");
      files_.push_back(file);
      if (!cache_.has_blob(repo, file.etag())) {
        std::error_code error;
        const auto partial = fs::file_size(cache_.incomplete_path(repo, file.etag()), error);
        needed +=
            file.size - (error ? 0 : std::min<qint64>(static_cast<qint64>(partial), file.size));
      }
    }
  } catch (const HubProtocolError& error) {
    failAll(QString::fromUtf8(error.what()));
    return;
  }
  if (files_.empty() && !info.files.empty())
    emit note(QStringLiteral("No file of %1 at %2 matches the include and exclude patterns.")
                  .arg(request_.repo, request_.revision));

  const QString folder = existing_folder(cache_.root());
  const qint64 free = options_.free_bytes(folder);
  if (needed > 0 && free >= 0 && needed > free) {
    failAll(QStringLiteral("%1 needs %2 more on disk, and %3 has %4 free; nothing was downloaded.")
                .arg(request_.repo, human_size(needed), folder, human_size(free)));
    return;
  }

  progress_.files_total = static_cast<int>(files_.size());
  for (const RepoFile& file : files_) {
    progress_.bytes_total += file.size;
    if (cache_.has_blob(repo, file.etag())) {
      try {
        cache_.place_in_snapshot(repo, commit_.toStdString(), file.path, file.etag());
      } catch (const std::exception& error) {
        failAll(QString::fromUtf8(error.what()));
        return;
      }
      progress_.bytes_done += file.size;
      ++progress_.files_done;
    } else {
      waiting_.push_back(file);
    }
  }
  emit progressed(progress_);
  startMore();
}

void SnapshotDownload::startMore() {
  while (!over_ && running_.size() < options_.parallel_files && !waiting_.empty()) {
    RepoFile file = std::move(waiting_.front());
    waiting_.erase(waiting_.begin());
    auto* download = new FileDownload(client_, cache_, request_.repo, commit_, std::move(file),
                                      options_.transfer, this);
    running_.append(download);
    connect(download, &FileDownload::advanced, this, [this](qint64 delta) {
      progress_.bytes_done += delta;
      emit progressed(progress_);
    });
    connect(download, &FileDownload::note, this, &SnapshotDownload::note);
    connect(
        download, &FileDownload::finished, this,
        [this, download](bool ok, const QString& error) { onFileFinished(download, ok, error); });
    download->start();
  }
  if (!over_ && running_.isEmpty() && waiting_.empty()) finishSnapshot();
}

void SnapshotDownload::onFileFinished(FileDownload* download, bool ok, const QString& error) {
  running_.removeOne(download);
  download->deleteLater();
  if (over_) return;
  if (!ok) {
    failAll(error);
    return;
  }
  try {
    cache_.place_in_snapshot(request_.repo.toStdString(), commit_.toStdString(),
                             download->file().path, download->file().etag());
  } catch (const std::exception& failure) {
    failAll(QString::fromUtf8(failure.what()));
    return;
  }
  ++progress_.files_done;
  emit progressed(progress_);
  startMore();
}

void SnapshotDownload::finishSnapshot() {
  const std::string repo = request_.repo.toStdString();
  const std::string commit = commit_.toStdString();
  try {
    const fs::path folder = cache_.snapshot_dir(repo, commit);
    fs::create_directories(folder);
    // refs/ exists even for a download by commit: @huggingface/hub's
    // scanCacheDir reports a repository without it as broken.
    fs::create_directories(cache_.repo_dir(repo) / "refs");
    if (request_.revision != commit_)
      cache_.write_ref(repo, request_.revision.toStdString(), commit);
    over_ = true;
    emit finished(QString::fromStdString(folder.string()));
  } catch (const std::exception& error) {
    failAll(QString::fromUtf8(error.what()));
  }
}

bool SnapshotDownload::stopAll(bool keep_partials) {
  if (over_) return false;
  over_ = true;
  const QList<FileDownload*> running = running_;
  running_.clear();
  for (FileDownload* download : running) {
    download->disconnect(this);
    if (keep_partials)
      download->stop();
    else
      download->cancel();
    download->deleteLater();
  }
  if (!keep_partials) {
    // Files of it that an earlier, paused run left partial go too.
    std::vector<std::string> etags;
    for (const RepoFile& file : waiting_)
      etags.push_back(file.etag());
    discard_partials(cache_, request_.repo.toStdString(), etags);
  }
  waiting_.clear();
  return true;
}

void SnapshotDownload::failAll(const QString& error) {
  if (stopAll(/*keep_partials=*/true)) emit failed(error);
}

void SnapshotDownload::cancel() {
  if (stopAll(/*keep_partials=*/false)) emit failed(QStringLiteral("Cancelled."));
}

void SnapshotDownload::pause() {
  if (stopAll(/*keep_partials=*/true)) emit paused();
}

}  // namespace quire::hub
