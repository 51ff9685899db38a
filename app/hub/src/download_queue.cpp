#include "quire/hub/download_queue.h"

#include "quire/hub/hub_client.h"

namespace quire::hub {
namespace {

// The speed is measured over this long.
constexpr qint64 kSpeedWindowMs = 5000;
// Progress is saved at most this often (a restart then shows it close to
// where it was).
constexpr qint64 kSaveIntervalMs = 5000;

}  // namespace

DownloadQueue::DownloadQueue(HubClient* client, HubCache cache, QString records_file,
                             SnapshotOptions options, QObject* parent)
    : QObject(parent),
      client_(client),
      cache_(std::move(cache)),
      records_file_(std::move(records_file)),
      options_(std::move(options)) {
  clock_.start();
}

DownloadQueue::~DownloadQueue() {
  // A download running when the program quits comes back paused.
  for (QueuedDownload& download : downloads_)
    if (download.state == QueuedDownload::State::Running ||
        download.state == QueuedDownload::State::Queued)
      download.record.paused = true;
  save();
  if (running_) {
    running_->disconnect(this);
    running_->pause();
  }
}

QString DownloadQueue::idOf(const QString& repo, const Quantization& quantization) {
  return repo + QLatin1Char('@') + QString::fromStdString(quantization.key());
}

QString DownloadQueue::restore() {
  if (records_file_.isEmpty()) return QString();
  QString error;
  for (DownloadRecord& record : read_download_records(records_file_, &error)) {
    if (find(record.id) != nullptr) continue;
    QueuedDownload download;
    record.paused = true;
    download.record = std::move(record);
    download.state = QueuedDownload::State::Paused;
    downloads_ << download;
  }
  emit changed();
  return error;
}

const QueuedDownload* DownloadQueue::find(const QString& id) const {
  for (const QueuedDownload& download : downloads_)
    if (download.record.id == id) return &download;
  return nullptr;
}

QueuedDownload* DownloadQueue::entry(const QString& id) {
  for (QueuedDownload& download : downloads_)
    if (download.record.id == id) return &download;
  return nullptr;
}

std::filesystem::path DownloadQueue::modelFolder(const DownloadRecord& record) const {
  std::filesystem::path folder =
      cache_.snapshot_dir(record.repo.toStdString(), record.commit.toStdString());
  if (!record.subfolder.isEmpty()) folder /= record.subfolder.toStdString();
  return folder;
}

QString DownloadQueue::add(const QString& repo, const Quantization& quantization) {
  const QString id = idOf(repo, quantization);
  if (QueuedDownload* existing = entry(id)) {
    if (existing->state == QueuedDownload::State::Paused ||
        existing->state == QueuedDownload::State::Failed)
      resume(id);
    return id;
  }
  QueuedDownload download;
  DownloadRecord& record = download.record;
  record.id = id;
  record.repo = repo;
  record.revision = QString::fromStdString(quantization.revision);
  record.commit = QString::fromStdString(quantization.commit);
  record.subfolder = QString::fromStdString(quantization.subfolder);
  record.title = repo + QLatin1Char(' ') + QString::fromStdString(quantization.label());
  for (const RepoFile& file : quantization.files) {
    record.paths << QString::fromStdString(file.path);
    record.etags << QString::fromStdString(file.etag());
  }
  record.bytes_total = quantization.bytes;
  downloads_ << download;
  save();
  startNext();
  emit changed();
  return id;
}

void DownloadQueue::startNext() {
  if (running_) return;
  for (QueuedDownload& download : downloads_) {
    if (download.state == QueuedDownload::State::Queued) {
      run(download);
      return;
    }
  }
}

void DownloadQueue::run(QueuedDownload& download) {
  SnapshotRequest request;
  request.repo = download.record.repo;
  // The commit the user chose, even if the branch moved since.
  request.revision = download.record.commit;
  for (const QString& path : download.record.paths)
    request.filter.include.push_back(exact_glob(path.toStdString()));
  download.state = QueuedDownload::State::Running;
  download.record.paused = false;
  download.message.clear();
  download.bytes_per_second = 0;
  samples_.clear();
  const QString id = download.record.id;
  auto* snapshot = new SnapshotDownload(client_, cache_, request, options_, this);
  running_ = snapshot;
  connect(snapshot, &SnapshotDownload::progressed, this,
          [this, id](const SnapshotProgress& progress) { onProgress(id, progress); });
  connect(snapshot, &SnapshotDownload::note, this, [this, id](const QString& text) {
    if (QueuedDownload* noted = entry(id)) noted->message = text;
    emit changed();
  });
  connect(snapshot, &SnapshotDownload::finished, this, [this, id] { onFinished(id); });
  connect(snapshot, &SnapshotDownload::failed, this,
          [this, id](const QString& error) { onFailed(id, error); });
  connect(snapshot, &SnapshotDownload::paused, this, [this] { startNext(); });
  save();
  snapshot->start();
}

void DownloadQueue::onProgress(const QString& id, const SnapshotProgress& progress) {
  QueuedDownload* download = entry(id);
  if (download == nullptr) return;
  download->record.bytes_done = progress.bytes_done;
  if (progress.bytes_total > 0) download->record.bytes_total = progress.bytes_total;
  const qint64 now = clock_.elapsed();
  samples_.emplace_back(now, progress.bytes_done);
  while (samples_.size() > 2 && now - samples_.front().first > kSpeedWindowMs)
    samples_.pop_front();
  const qint64 span = now - samples_.front().first;
  // A resumed file's bytes already on disk arrive at once: not a speed.
  if (span >= 500 && samples_.back().second >= samples_.front().second)
    download->bytes_per_second =
        double(samples_.back().second - samples_.front().second) * 1000.0 / double(span);
  if (now - last_save_ms_ >= kSaveIntervalMs) {
    last_save_ms_ = now;
    save();
  }
  emit changed();
}

void DownloadQueue::onFinished(const QString& id) {
  QueuedDownload* download = entry(id);
  if (running_) running_->deleteLater();
  running_ = nullptr;
  if (download != nullptr) {
    download->state = QueuedDownload::State::Done;
    download->bytes_per_second = 0;
    download->record.bytes_done = download->record.bytes_total;
    download->message.clear();
    const DownloadRecord& record = download->record;
    try {
      // Downloaded by commit; the branch it was chosen on points at it, as
      // Python's tools would have written.
      if (record.revision != record.commit)
        cache_.write_ref(record.repo.toStdString(), record.revision.toStdString(),
                         record.commit.toStdString());
    } catch (const std::exception& error) {
      download->message = QString::fromUtf8(error.what());
    }
    download->folder = QString::fromStdString(modelFolder(record).string());
    save();
    emit downloaded(id, download->folder);
  }
  startNext();
  emit changed();
}

void DownloadQueue::onFailed(const QString& id, const QString& error) {
  if (running_) running_->deleteLater();
  running_ = nullptr;
  if (QueuedDownload* download = entry(id)) {
    if (download->state != QueuedDownload::State::Running) return;  // cancelled: handled there
    download->state = QueuedDownload::State::Failed;
    download->message = error;
    download->bytes_per_second = 0;
    save();
    emit downloadFailed(id, error);
  }
  startNext();
  emit changed();
}

void DownloadQueue::pause(const QString& id) {
  QueuedDownload* download = entry(id);
  if (download == nullptr) return;
  if (download->state == QueuedDownload::State::Running && running_) {
    download->state = QueuedDownload::State::Paused;
    download->record.paused = true;
    download->bytes_per_second = 0;
    SnapshotDownload* snapshot = running_;
    running_ = nullptr;
    snapshot->pause();  // emits paused(): the next one starts
    snapshot->deleteLater();
  } else if (download->state == QueuedDownload::State::Queued) {
    download->state = QueuedDownload::State::Paused;
    download->record.paused = true;
  }
  save();
  emit changed();
}

void DownloadQueue::resume(const QString& id) {
  QueuedDownload* download = entry(id);
  if (download == nullptr || (download->state != QueuedDownload::State::Paused &&
                              download->state != QueuedDownload::State::Failed))
    return;
  download->state = QueuedDownload::State::Queued;
  download->record.paused = false;
  download->message.clear();
  startNext();
  save();
  emit changed();
}

void DownloadQueue::cancel(const QString& id) {
  QueuedDownload* download = entry(id);
  if (download == nullptr) return;
  const DownloadRecord record = download->record;
  const bool was_running = download->state == QueuedDownload::State::Running;
  downloads_.removeIf([&](const QueuedDownload& item) { return item.record.id == id; });
  if (was_running && running_) {
    SnapshotDownload* snapshot = running_;
    running_ = nullptr;
    snapshot->disconnect(this);
    snapshot->cancel();
    snapshot->deleteLater();
  }
  // Files of it that an earlier run left partial are removed too.
  std::vector<std::string> etags;
  for (const QString& etag : record.etags)
    etags.push_back(etag.toStdString());
  discard_partials(cache_, record.repo.toStdString(), etags);
  save();
  startNext();
  emit changed();
}

void DownloadQueue::save() {
  if (records_file_.isEmpty()) return;
  QList<DownloadRecord> unfinished;
  for (const QueuedDownload& download : downloads_)
    if (download.state != QueuedDownload::State::Done) unfinished << download.record;
  QString error;
  if (!write_download_records(records_file_, unfinished, &error)) emit problem(error);
}

}  // namespace quire::hub
