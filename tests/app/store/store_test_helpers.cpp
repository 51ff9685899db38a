#include "store_test_helpers.h"

#include <QFile>
#include <QSqlError>
#include <QSqlQuery>
#include <QTest>

namespace quire::store::test {

QByteArray read_bytes(const QString& path) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) return {};
  return file.readAll();
}

void write_bytes(const QString& path, const QByteArray& bytes) {
  QFile file(path);
  if (file.open(QIODevice::WriteOnly | QIODevice::Truncate)) file.write(bytes);
}

QStringList file_names(const QString& dir) {
  return QDir(dir).entryList(QDir::Files | QDir::Hidden, QDir::Name);
}

StoreOptions options(const QString& path, const ManualTime* time) {
  StoreOptions options;
  options.path = path;
  if (time != nullptr) options.now = time->function();
  return options;
}

RawDatabase::RawDatabase(const QString& path) {
  static int counter = 0;
  name_ = QStringLiteral("raw-test-connection-%1").arg(++counter);
  db_ = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), name_);
  db_.setDatabaseName(path);
  if (!db_.open()) qWarning() << "cannot open" << path << db_.lastError().text();
}

RawDatabase::~RawDatabase() {
  db_.close();
  db_ = QSqlDatabase();
  QSqlDatabase::removeDatabase(name_);
}

bool RawDatabase::exec(const QStringList& statements) {
  for (const QString& statement : statements) {
    QSqlQuery query(db_);
    if (!query.exec(statement)) {
      QTest::qFail(qPrintable(QStringLiteral("%1: %2").arg(statement, query.lastError().text())),
                   __FILE__, __LINE__);
      return false;
    }
  }
  return true;
}

QVariant RawDatabase::value(const QString& sql) {
  QSqlQuery query(db_);
  if (!query.exec(sql) || !query.next()) {
    qWarning() << sql << query.lastError().text();
    return {};
  }
  return query.value(0);
}

QByteArray chat_file_with_settings(const QByteArray& settings) {
  return "{\"format\": \"quire-chat\", \"version\": 3, \"title\": \"t\", "
         "\"created\": \"2024-05-01T12:00:00.000Z\", \"updated\": \"2024-05-01T12:00:00.000Z\", "
         "\"model\": {\"dir\": \"\", \"settings\": {}}, \"chat_settings\": " +
         settings + ", \"messages\": []}";
}

}  // namespace quire::store::test
