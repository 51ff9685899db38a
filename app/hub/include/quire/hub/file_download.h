#pragma once

// One file of a snapshot from /resolve/{commit}/{path} into blobs/<etag>:
// written to blobs/<etag>.incomplete under the lock huggingface_hub takes,
// resumed with Range (within a run and after a restart; LFS files, since
// text files may come compressed and are small), checked against its
// SHA-256 (LFS files) or git blob hash (the others) before it enters the
// cache. A redirect to another host is followed without the Authorization
// header. Broken, stalled and rate-limited transfers are retried as the
// client's RetryPolicy says; a server that ignores Range restarts the file.

#include <QByteArray>
#include <QCryptographicHash>
#include <QElapsedTimer>
#include <QFile>
#include <QObject>
#include <QPointer>
#include <QString>
#include <QTimer>
#include <QUrl>

#include "quire/hub/hub_cache.h"
#include "quire/hub/hub_models.h"

class QNetworkReply;

namespace quire::hub {

class HubClient;

struct TransferOptions {
  int stall_timeout_ms = 30'000;  // no byte for this long: the connection is dropped and retried
  int max_redirects = 5;
};

class FileDownload : public QObject {
  Q_OBJECT

 public:
  FileDownload(HubClient* client, HubCache cache, QString repo, QString commit, RepoFile file,
               TransferOptions options, QObject* parent = nullptr);
  ~FileDownload() override;

  const RepoFile& file() const { return file_; }
  // Bytes of the file on disk so far.
  qint64 bytesOnDisk() const { return written_; }

  void start();
  // Stops the transfer and removes the partial file.
  void cancel();
  // Stops the transfer and keeps the partial file for a later resume.
  void stop();

 signals:
  // `delta` bytes were added (negative when a partial file was dropped).
  void advanced(qint64 delta);
  // Something the user may like to know: a retry, a resume, a restart.
  void note(const QString& text);
  // The blob is in the cache (ok), or `error` says why not.
  void finished(bool ok, const QString& error);

 private:
  bool lock();
  void unlock();
  bool openPartial();
  void request(const QUrl& url, bool send_token, int redirects);
  void onHeaders();
  void onData();
  void onFinished();
  void restartFromZero(const QString& why);
  void resetPartial();
  void retryOrFail(const QString& why, qint64 retry_after_s, const QString& final_error);
  void complete();
  void fail(const QString& error, bool drop_partial);
  void finish(bool ok, const QString& error);

  HubClient* client_;
  HubCache cache_;
  QString repo_;
  QString commit_;
  RepoFile file_;
  TransferOptions options_;

  QFile partial_;
  int lock_fd_ = -1;
  qint64 written_ = 0;
  QCryptographicHash hash_;
  QPointer<QNetworkReply> reply_;
  QTimer stall_timer_;
  bool stalled_ = false;
  bool accepting_body_ = false;
  bool done_ = false;
  bool waiting_for_lock_ = false;
  int attempt_ = 1;
  QUrl resolve_url_;
};

}  // namespace quire::hub
