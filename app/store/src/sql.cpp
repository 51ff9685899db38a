#include "sql.h"

#include <QSqlError>

namespace quire::store::detail {

QString describe(const QSqlError& error) {
  const QString database = error.databaseText().trimmed();
  const QString driver = error.driverText().trimmed();
  if (database.isEmpty()) return driver;
  if (driver.isEmpty()) return database;
  return driver + QStringLiteral(": ") + database;
}

QSqlQuery* Statements::get(const QString& sql, QString* error) {
  auto found = cache_.find(sql);
  if (found != cache_.end()) return found->get();
  auto query = std::make_shared<QSqlQuery>(db_);
  query->setForwardOnly(true);
  if (!query->prepare(sql)) {
    *error = describe(query->lastError());
    return nullptr;
  }
  cache_.insert(sql, query);
  return query.get();
}

Run::Run(Statements& statements, const QString& sql) : query_(statements.get(sql, &error_)) {}

Run::~Run() {
  if (query_ != nullptr) query_->finish();
}

Run& Run::operator<<(const QVariant& value) {
  if (query_ != nullptr) query_->bindValue(bound_++, value);
  return *this;
}

Run& Run::operator<<(const QString& text) {
  return *this << QVariant(text.isNull() ? QStringLiteral("") : text);
}

bool Run::exec() {
  if (query_ == nullptr) return false;
  if (!query_->exec()) {
    error_ = describe(query_->lastError());
    return false;
  }
  return true;
}

bool exec_once(const QSqlDatabase& db, const QString& sql, QString* error) {
  QSqlQuery query(db);
  if (!query.exec(sql)) {
    *error = describe(query.lastError());
    return false;
  }
  return true;
}

QVariant query_value(const QSqlDatabase& db, const QString& sql, QString* error) {
  QSqlQuery query(db);
  if (!query.exec(sql)) {
    *error = describe(query.lastError());
    return {};
  }
  if (!query.next()) {
    *error = query.lastError().isValid() ? describe(query.lastError())
                                         : QStringLiteral("no result from \"%1\"").arg(sql);
    return {};
  }
  return query.value(0);
}

Transaction::Transaction(const QSqlDatabase& db) : db_(db) {
  began_ = exec_once(db_, QStringLiteral("BEGIN IMMEDIATE"), &error_);
}

Transaction::~Transaction() {
  if (began_ && !done_) {
    QString ignored;
    exec_once(db_, QStringLiteral("ROLLBACK"), &ignored);
  }
}

bool Transaction::commit() {
  if (!began_ || done_) return false;
  if (!exec_once(db_, QStringLiteral("COMMIT"), &error_)) return false;
  done_ = true;
  return true;
}

}  // namespace quire::store::detail
