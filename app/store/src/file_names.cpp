// Backups and set-aside copies of the history file.

#include "file_names.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>

#include "quire/app/store/chat_store.h"

namespace quire::store {
namespace detail {

QString unused_sibling(const QString& path, const QString& tag) {
  const QFileInfo info(path);
  const QString suffix = info.suffix().isEmpty() ? QString() : QLatin1Char('.') + info.suffix();
  for (int attempt = 1;; ++attempt) {
    const QString numbered = attempt == 1 ? tag : QStringLiteral("%1-%2").arg(tag).arg(attempt);
    const QString candidate =
        info.dir().filePath(info.completeBaseName() + QLatin1Char('.') + numbered + suffix);
    if (!QFileInfo::exists(candidate) && !QFileInfo::exists(candidate + QStringLiteral("-wal")) &&
        !QFileInfo::exists(candidate + QStringLiteral("-shm"))) {
      return candidate;
    }
  }
}

}  // namespace detail

QString ChatStore::set_aside(const QString& path, const QString& label, QString* error) {
  const auto failed = [&](const QString& message) {
    if (error != nullptr) *error = message;
    return QString();
  };
  if (!QFileInfo(path).isFile()) {
    return failed(QStringLiteral("There is no file %1 to set aside.").arg(path));
  }
  const QString stamp = QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss"));
  const QString target = detail::unused_sibling(path, label + QLatin1Char('-') + stamp);
  if (!QFile::rename(path, target)) {
    return failed(QStringLiteral("Could not rename %1 to %2. Move the file away yourself, then "
                                 "start Quire again.")
                      .arg(path, target));
  }
  // The log belongs to the old file: left behind, SQLite would replay it into
  // the new one. If it cannot follow, the old file goes back where it was.
  const QString wal = path + QStringLiteral("-wal");
  if (QFileInfo::exists(wal) && !QFile::rename(wal, target + QStringLiteral("-wal"))) {
    QFile::rename(target, path);
    return failed(QStringLiteral("Could not move %1 along with the chat history. Move both "
                                 "files away yourself, then start Quire again.")
                      .arg(wal));
  }
  // The shared-memory index is rebuilt from the log; it only has to go.
  const QString shm = path + QStringLiteral("-shm");
  if (QFileInfo::exists(shm) && !QFile::rename(shm, target + QStringLiteral("-shm"))) {
    QFile::remove(shm);
  }
  return target;
}

}  // namespace quire::store
