#pragma once

// ChatStore's private state and the helpers its source files share.

#include <QDateTime>
#include <QSqlDatabase>
#include <QString>
#include <memory>
#include <optional>

#include "quire/app/store/chat_store.h"
#include "sql.h"

namespace quire::store::detail {

struct StoreState {
  StoreOptions options;
  QString path;
  QString connection;  // QSqlDatabase connection name, unique per store
  QSqlDatabase db;
  std::unique_ptr<detail::Statements> statements;
  bool open = false;
  bool fts = false;
  QDateTime opened_at;
  mutable StoreError error = StoreError::None;
  mutable QString error_string;

  // Records a failure; returns false so callers can `return d_->fail(...)`.
  bool fail(StoreError kind, const QString& message) const {
    error = kind;
    error_string = message;
    return false;
  }
  bool fail_sql(const QString& what, const QString& sql_error) const {
    return fail(
        StoreError::Sql,
        QStringLiteral("Could not %1 in the chat history %2: %3").arg(what, path, sql_error));
  }
  void succeed() const {
    error = StoreError::None;
    error_string.clear();
  }
  bool require_open() const {
    if (open) return true;
    return fail(StoreError::NotOpen, QStringLiteral("The chat history is not open."));
  }
  qint64 now_ms() const {
    return (options.now ? options.now() : QDateTime::currentDateTimeUtc()).toMSecsSinceEpoch();
  }
  detail::Statements& sql() { return *statements; }
};

inline QDateTime from_ms(qint64 ms) {
  return QDateTime::fromMSecsSinceEpoch(ms, Qt::UTC);
}

// The columns read_summary() expects, as "SELECT <columns> FROM chats c ...".
extern const QString kSummaryColumns;
ChatSummary read_summary(const Run& run);
QVariant tokens_value(std::span<const std::int32_t> tokens);
QVariant stats_value(const std::optional<GenerationStats>& stats);

}  // namespace quire::store::detail
