#pragma once

// A revision of a repository into the shared cache: its file list with sizes
// and hashes, the files the filter accepts downloaded a few at a time
// (FileDownload), each linked into snapshots/<commit>/, and refs/<revision>
// written last. Every name the Hub gives is checked before anything is
// written, and the free space is checked before the first byte. With
// HF_HUB_OFFLINE the cached snapshot is answered without a request.

#include <QList>
#include <QObject>
#include <QString>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "quire/hub/file_download.h"
#include "quire/hub/file_filter.h"
#include "quire/hub/hub_cache.h"
#include "quire/hub/hub_models.h"

namespace quire::hub {

class HubClient;

// Removes the partial files (blobs/<etag>.incomplete) of `etags`, except
// those another download holds locked.
void discard_partials(const HubCache& cache, const std::string& repo,
                      const std::vector<std::string>& etags);

struct SnapshotRequest {
  QString repo;                               // org/name
  QString revision = QStringLiteral("main");  // branch, tag or commit
  FileFilter filter;
};

struct SnapshotOptions {
  int parallel_files = 3;
  TransferOptions transfer;
  // Free bytes where `folder` is; QStorageInfo when empty (tests replace it).
  std::function<qint64(const QString& folder)> free_bytes;
};

struct SnapshotProgress {
  qint64 bytes_done = 0;
  qint64 bytes_total = 0;
  int files_done = 0;
  int files_total = 0;
};

class SnapshotDownload : public QObject {
  Q_OBJECT

 public:
  SnapshotDownload(HubClient* client, HubCache cache, SnapshotRequest request,
                   SnapshotOptions options, QObject* parent = nullptr);
  ~SnapshotDownload() override;

  void start();
  // Stops every transfer; the partial files are removed, those of files not
  // started in this run (left by an earlier, paused one) too.
  void cancel();
  // Stops every transfer and keeps the partial files: a later download of
  // the same request resumes them, in this run of the program or the next.
  void pause();

  const SnapshotProgress& progress() const { return progress_; }
  // The files chosen, once the file list has arrived.
  const std::vector<RepoFile>& files() const { return files_; }

 signals:
  void paused();
  void progressed(const quire::hub::SnapshotProgress& progress);
  void note(const QString& text);
  void finished(const QString& snapshot_folder);
  void failed(const QString& error);

 private:
  void onInfo(const ModelInfo& info);
  void startMore();
  void onFileFinished(FileDownload* download, bool ok, const QString& error);
  void finishSnapshot();
  void failAll(const QString& error);
  // Ends every transfer; false when the download was over already.
  bool stopAll(bool keep_partials);

  HubClient* client_;
  HubCache cache_;
  SnapshotRequest request_;
  SnapshotOptions options_;
  QString commit_;
  std::vector<RepoFile> files_;
  std::vector<RepoFile> waiting_;
  QList<FileDownload*> running_;
  SnapshotProgress progress_;
  bool over_ = false;
};

}  // namespace quire::hub

Q_DECLARE_METATYPE(quire::hub::SnapshotProgress)
