#pragma once

// The app's downloads of whole quantizations: one runs at a time (its files
// a few in parallel, as SnapshotDownload does) and the others wait, so that
// a user's connection is not split many ways. Each is kept in a records
// file while unfinished; after a restart they come back paused, and resuming
// continues their partial files. Progress carries a speed over the last few
// seconds for "time left".

#include <QElapsedTimer>
#include <QList>
#include <QObject>
#include <QPointer>
#include <QString>
#include <deque>
#include <utility>

#include "quire/hub/download_records.h"
#include "quire/hub/hub_cache.h"
#include "quire/hub/repo_quantizations.h"
#include "quire/hub/snapshot_download.h"

namespace quire::hub {

class HubClient;

struct QueuedDownload {
  enum class State { Queued, Running, Paused, Failed, Done };
  DownloadRecord record;
  State state = State::Queued;
  double bytes_per_second = 0;
  QString message;  // the last note, or the error
  QString folder;   // Done: the model folder
};

class DownloadQueue : public QObject {
  Q_OBJECT

 public:
  // `records_file` keeps the unfinished downloads; "" keeps none.
  DownloadQueue(HubClient* client, HubCache cache, QString records_file, SnapshotOptions options,
                QObject* parent = nullptr);
  ~DownloadQueue() override;

  // The downloads the records file held, paused; a message when it could
  // not be read.
  QString restore();

  // Queues `quantization` of `repo` and starts it when nothing else runs.
  // Returns its id; one already queued is not queued twice.
  QString add(const QString& repo, const Quantization& quantization);
  void pause(const QString& id);
  void resume(const QString& id);
  // Stops it and removes its partial files.
  void cancel(const QString& id);

  const QList<QueuedDownload>& downloads() const { return downloads_; }
  const QueuedDownload* find(const QString& id) const;
  static QString idOf(const QString& repo, const Quantization& quantization);
  // The model folder a finished record's files are in.
  std::filesystem::path modelFolder(const DownloadRecord& record) const;

 signals:
  void changed();
  void downloaded(const QString& id, const QString& folder);
  void downloadFailed(const QString& id, const QString& error);
  // The records file could not be written: a restart will not list them.
  void problem(const QString& text);

 private:
  QueuedDownload* entry(const QString& id);
  void startNext();
  void run(QueuedDownload& download);
  void onProgress(const QString& id, const SnapshotProgress& progress);
  void onFinished(const QString& id);
  void onFailed(const QString& id, const QString& error);
  void save();

  HubClient* client_;
  HubCache cache_;
  QString records_file_;
  SnapshotOptions options_;
  QList<QueuedDownload> downloads_;
  QPointer<SnapshotDownload> running_;
  QElapsedTimer clock_;
  std::deque<std::pair<qint64, qint64>> samples_;  // (ms, bytes done) of the running download
  qint64 last_save_ms_ = 0;
};

}  // namespace quire::hub
