#pragma once

// Plain records of the chat history store. They carry no database handle, so
// the GUI, the exporters and the tests pass them around freely.

#include <QDateTime>
#include <QJsonObject>
#include <QList>
#include <QString>
#include <QtGlobal>
#include <cstdint>
#include <optional>
#include <vector>

namespace quire::store {

// Distinct id types, so that a chat id is never passed where a message id is
// expected. Ids are never reused (the tables use AUTOINCREMENT): a ReplyWriter
// holding the id of a message that was deleted cannot write into a newer one.
enum class ChatId : qint64 {};
enum class MessageId : qint64 {};

constexpr qint64 raw(ChatId id) {
  return static_cast<qint64>(id);
}
constexpr qint64 raw(MessageId id) {
  return static_cast<qint64>(id);
}

enum class Role { System, User, Assistant };

// "system", "user", "assistant": the spelling stored in the database and files.
QString role_name(Role role);
std::optional<Role> role_from_name(const QString& name);

// What a generation reported. Stored as JSON so that fields can be added
// without a schema change; unknown fields are ignored when read.
struct GenerationStats {
  int prompt_tokens = 0;
  // Prompt tokens found in the prefix cache and not computed again.
  int cached_tokens = 0;
  // Prompt tokens that were computed (prompt_tokens - cached_tokens, as measured).
  int computed_tokens = 0;
  int generated_tokens = 0;
  double time_to_first_token_ms = 0;
  double tokens_per_second = 0;
  // "eos", "stop_string", "max_tokens", "cancelled", "error", or kStopInterrupted.
  QString stop_reason;
  QString model;

  QJsonObject to_json() const;
  static GenerationStats from_json(const QJsonObject& object);
  bool operator==(const GenerationStats&) const = default;
};

// The stop reason a reply carries from the moment it is created until the
// generation finishes. A reply cut short by a crash is read back with it.
inline constexpr char kStopInterrupted[] = "interrupted";

// The model a chat last used: its directory and the settings (sampling,
// context, cache format) as the application's settings object serialises them.
struct ModelUse {
  QString model_dir;
  QJsonObject settings;
  bool operator==(const ModelUse&) const = default;
};

// One chat as the sidebar lists it.
struct ChatSummary {
  ChatId id{};
  QString title;
  QDateTime created;
  // Last activity: the newest message written or edited (not a rename).
  QDateTime updated;
  ModelUse model;
  int message_count = 0;
  // Set while the chat is soft-deleted (undo is still possible).
  std::optional<QDateTime> deleted;
  bool operator==(const ChatSummary&) const = default;
};

struct Message {
  MessageId id{};
  ChatId chat{};
  // 0, 1, 2, ... in conversation order, without gaps.
  int position = 0;
  Role role = Role::User;
  QString text;
  // Token ids of the rendered turn (prompt template included), empty when not
  // rendered yet or after an edit made them stale.
  std::vector<std::int32_t> tokens;
  QDateTime created;
  QDateTime updated;
  std::optional<GenerationStats> stats;
  bool operator==(const Message&) const = default;
};

// A whole chat detached from the database: what export writes and import reads.
struct ChatDocument {
  QString title;
  QDateTime created;
  QDateTime updated;
  ModelUse model;
  QList<Message> messages;
  bool operator==(const ChatDocument&) const = default;
};

// A chat that matched a search, with the first matching message if any.
struct SearchHit {
  ChatSummary chat;
  bool title_matches = false;
  std::optional<MessageId> message;
  // A short excerpt of that message around the match.
  QString snippet;
};

}  // namespace quire::store
