#pragma once

// Thin helpers over QtSql: statements prepared once and reused, runs that
// always release their statement, and BEGIN IMMEDIATE transactions.

#include <QHash>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QString>
#include <QVariant>
#include <memory>

namespace quire::store::detail {

// "what failed: SQLite's message".
QString describe(const QSqlError& error);

// Every statement is compiled once per connection. The cache is dropped
// before the connection closes (a QSqlQuery must not outlive its database).
class Statements {
 public:
  explicit Statements(QSqlDatabase db) : db_(std::move(db)) {}
  // A prepared query for `sql`, or nullptr with *error set.
  QSqlQuery* get(const QString& sql, QString* error);
  void clear() { cache_.clear(); }

 private:
  QSqlDatabase db_;
  QHash<QString, std::shared_ptr<QSqlQuery>> cache_;
};

// One execution of a cached statement. Values are bound in order with
// operator<<; the statement is reset when the Run ends, so no read
// transaction lingers and blocks WAL checkpoints.
class Run {
 public:
  Run(Statements& statements, const QString& sql);
  ~Run();
  Run(const Run&) = delete;
  Run& operator=(const Run&) = delete;

  // A null QVariant binds NULL.
  Run& operator<<(const QVariant& value);
  // Text always binds as text: QtSql would bind a null QString as NULL.
  Run& operator<<(const QString& text);
  Run& operator<<(qint64 value) { return *this << QVariant(value); }
  Run& operator<<(int value) { return *this << QVariant(value); }
  bool exec();
  bool next() { return query_ != nullptr && query_->next(); }
  QVariant value(int column) const { return query_->value(column); }
  int rows_affected() const { return query_->numRowsAffected(); }
  QVariant last_insert_id() const { return query_->lastInsertId(); }
  const QString& error() const { return error_; }

 private:
  QSqlQuery* query_ = nullptr;
  int bound_ = 0;
  QString error_;
};

// Runs one statement that is not worth caching (pragmas, schema changes).
bool exec_once(const QSqlDatabase& db, const QString& sql, QString* error);
// The first column of the first row of `sql`, or an invalid QVariant with *error set.
QVariant query_value(const QSqlDatabase& db, const QString& sql, QString* error);

// A write transaction. BEGIN IMMEDIATE takes the write lock up front, so a
// second Quire instance waits (busy timeout) instead of failing halfway.
// Rolled back unless commit() succeeded.
class Transaction {
 public:
  explicit Transaction(const QSqlDatabase& db);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

  bool ok() const { return began_; }
  bool commit();
  const QString& error() const { return error_; }

 private:
  QSqlDatabase db_;
  bool began_ = false;
  bool done_ = false;
  QString error_;
};

}  // namespace quire::store::detail
