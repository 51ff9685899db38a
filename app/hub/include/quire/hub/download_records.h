#pragma once

// The downloads a user started and has not finished or cancelled, kept in a
// small JSON file so that they survive a restart of the program: each names
// its repository, revision and files, so that a later run resumes the
// partial blobs the cache still holds, or removes them on cancel.

#include <QList>
#include <QString>
#include <QStringList>

namespace quire::hub {

struct DownloadRecord {
  QString id;         // repo + '@' + the quantization's key
  QString repo;       // org/name
  QString revision;   // the branch it was found on
  QString commit;     // what the branch pointed at then
  QString subfolder;  // "" or the quantization's folder
  QString title;      // what the list shows
  QStringList paths;  // the files, from the repository's root
  QStringList etags;  // their blobs, for removing partial files on cancel
  qint64 bytes_total = 0;
  qint64 bytes_done = 0;  // at the last save
  bool paused = false;

  friend bool operator==(const DownloadRecord&, const DownloadRecord&) = default;
};

// The records in `file`; none when it does not exist. A file that cannot be
// read or parsed gives none and says why in *error (the downloads are then
// started again by hand; their partial files are still resumed).
QList<DownloadRecord> read_download_records(const QString& file, QString* error);
// Replaces `file` atomically; false with *error when it cannot be written.
bool write_download_records(const QString& file, const QList<DownloadRecord>& records,
                            QString* error);

}  // namespace quire::hub
