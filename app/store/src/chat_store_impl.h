#pragma once

// ChatStore's private state and the helpers its source files share.

#include <QDateTime>
#include <QHash>
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

// --- messages (message_rows.cpp) ---

// The columns read_message() expects, of `messages m`.
extern const QString kMessageColumns;
Message read_message(const Run& run);
// The tool_calls and tool_result columns: JSON text, NULL when none.
QVariant tool_calls_value(const QList<ToolCall>& calls);
QVariant tool_result_value(const std::optional<ToolResult>& result);
// Sets a message's tool_calls and tool_result columns.
bool write_tool_columns(StoreState& d, MessageId message, const QList<ToolCall>& calls,
                        const std::optional<ToolResult>& result);

// What a reply carries from its creation until its generation finishes.
GenerationStats reply_stats(const QString& model);

bool begin(StoreState& d, Transaction& transaction);
bool commit(StoreState& d, Transaction& transaction);

// Marks activity on a chat (only a live one with `live_only`). False (and
// NotFound) when the chat is gone.
bool touch_chat(StoreState& d, ChatId chat, qint64 now, bool live_only);

// A message's chat, parent and depth; NotFound when there is none.
struct Place {
  ChatId chat{};
  std::optional<MessageId> parent;
  int position = 0;
};
std::optional<Place> place_of(StoreState& d, MessageId message);

// "WITH RECURSIVE path(id) AS (...)": the ids of a chat's current path, from
// the first message down. It takes one bound value, the chat's id.
extern const QString kPathTable;

// The leaf of a chat's current path: nullopt on an error, an empty optional
// for a chat without messages.
std::optional<std::optional<MessageId>> current_leaf(StoreState& d, ChatId chat);

// Makes `message` and its ancestors the most recently selected among their
// siblings, so the current path runs through it.
bool select_chain(StoreState& d, ChatId chat, MessageId message);

// Adds a message below `parent` (nullopt: a new first message) of a live
// chat and makes it current; the caller holds the transaction.
std::optional<MessageId> insert_child(StoreState& d, ChatId chat, std::optional<MessageId> parent,
                                      Role role, const QString& text,
                                      std::span<const std::int32_t> tokens,
                                      const std::optional<GenerationStats>& stats, qint64 now);

// Removes every message below `message`, in every branch (not undoable).
bool remove_descendants(StoreState& d, MessageId message);

// --- images (message_images.cpp) ---

// What makes an image unfit to store ("it is empty", ...), or "".
QString image_problem(const ChatImage& image);
// Attaches `images`, in order, to a message that has none yet; stores each
// image unless it is stored already. InvalidArgument names the first unfit
// one. The caller holds the transaction.
bool write_message_images(StoreState& d, MessageId message, const QList<ChatImage>& images);
// Fills in the images of `messages`, which are all of one chat.
bool load_message_images(StoreState& d, QList<Message>& messages);

// --- whole chats (chat_store_documents.cpp, chat_store_settings.cpp) ---

// Adds a chat with its messages; the caller holds the transaction.
std::optional<ChatId> insert_document_rows(StoreState& d, const ChatDocument& document);

std::optional<ChatSettings> read_settings(StoreState& d, ChatId chat);
// InvalidArgument when a value is out of range.
bool write_settings(StoreState& d, ChatId chat, const ChatSettings& settings);

}  // namespace quire::store::detail
