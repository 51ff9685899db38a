#pragma once

// Shared by the chat store suites: temporary files, a hand-driven wall clock,
// and a raw SQLite connection for looking at what the store wrote.

#include <QByteArray>
#include <QDateTime>
#include <QDir>
#include <QSqlDatabase>
#include <QString>
#include <QStringList>
#include <memory>

#include "quire/app/store/chat_store.h"

namespace quire::store::test {

QByteArray read_bytes(const QString& path);
void write_bytes(const QString& path, const QByteArray& bytes);
// The names of the files in `dir`, sorted.
QStringList file_names(const QString& dir);
// A chat file (format version 3) with no messages whose "chat_settings" is
// `settings`, JSON text.
QByteArray chat_file_with_settings(const QByteArray& settings);

// A wall clock that moves only when told, starting at 2024-05-01T12:00:00Z.
class ManualTime {
 public:
  QDateTime now() const { return now_; }
  void advance_ms(qint64 ms) { now_ = now_.addMSecs(ms); }
  std::function<QDateTime()> function() const {
    return [this] { return now_; };
  }

 private:
  QDateTime now_ = QDateTime(QDate(2024, 5, 1), QTime(12, 0), Qt::UTC);
};

StoreOptions options(const QString& path, const ManualTime* time = nullptr);

// A separate QtSql connection to `path`, closed and removed with the object.
class RawDatabase {
 public:
  explicit RawDatabase(const QString& path);
  ~RawDatabase();
  RawDatabase(const RawDatabase&) = delete;
  RawDatabase& operator=(const RawDatabase&) = delete;

  QSqlDatabase& db() { return db_; }
  // Runs each statement; fails the current test (returns false) on an error.
  bool exec(const QStringList& statements);
  // The first column of the first row.
  QVariant value(const QString& sql);

 private:
  QString name_;
  QSqlDatabase db_;
};

}  // namespace quire::store::test
