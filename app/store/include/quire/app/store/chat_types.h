#pragma once

// Plain records of the chat history store. They carry no database handle, so
// the GUI, the exporters and the tests pass them around freely.

#include <QByteArray>
#include <QDateTime>
#include <QJsonObject>
#include <QList>
#include <QMap>
#include <QString>
#include <QStringList>
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

enum class Role { System, User, Assistant, Tool };

// "system", "user", "assistant", "tool": the spelling stored in the database
// and files.
QString role_name(Role role);
std::optional<Role> role_from_name(const QString& name);

// One call of a tool that an assistant message made, as OpenAI names its
// parts. Stored as JSON with its message.
struct ToolCall {
  QString id;
  QString name;       // the tool's (function's) name
  QString arguments;  // JSON text (an object), exactly as the model wrote it
  QString server;     // the MCP server that offers the tool; empty when unknown

  QJsonObject to_json() const;  // {"id", "name", "arguments", "server"}
  // nullopt when "id" or "name" is missing or not a string.
  static std::optional<ToolCall> from_json(const QJsonObject& object);
  bool operator==(const ToolCall&) const = default;
};

// What happened to a call: it ran (Allowed; the result may still be an
// error the tool reported), the user refused it, it failed to run, it ran
// out of time, or it was cancelled.
enum class ToolStatus { Allowed, Denied, Failed, TimedOut, Cancelled };

// "allowed", "denied", "failed", "timed_out", "cancelled".
QString tool_status_name(ToolStatus status);
std::optional<ToolStatus> tool_status_from_name(const QString& name);

// What a Tool message answers; the message's text is the result the model
// reads.
struct ToolResult {
  QString call_id;  // the id of the call (ToolCall::id) it answers
  QString name;     // the tool's name
  ToolStatus status = ToolStatus::Allowed;

  QJsonObject to_json() const;  // {"call_id", "name", "status"}
  // nullopt when "call_id" is missing or "status" unknown.
  static std::optional<ToolResult> from_json(const QJsonObject& object);
  bool operator==(const ToolResult&) const = default;
};

// What a generation reported. Stored as JSON so that fields can be added
// without a schema change; unknown fields are ignored when read.
struct GenerationStats {
  int prompt_tokens = 0;
  // Prompt tokens found in the prefix cache and not computed again; -1 when
  // a remote engine did not say.
  int cached_tokens = 0;
  // Prompt tokens that were computed (prompt_tokens - cached_tokens, as
  // measured); -1 when a remote engine did not say.
  int computed_tokens = 0;
  // Of the cached tokens, those whose pages were read back from the cache's
  // disk tier (a chat resumed after a restart).
  int disk_tokens = 0;
  int generated_tokens = 0;
  double time_to_first_token_ms = 0;
  double tokens_per_second = 0;
  // Speculative decoding: tokens drafted, and of those the ones the model
  // confirmed; both 0 for a reply that did not draft.
  int drafted_tokens = 0;
  int accepted_tokens = 0;
  // "eos", "stop_string", "max_tokens", "cancelled", "error", or kStopInterrupted.
  QString stop_reason;
  QString model;
  // The remote engine that answered ("gpu-box:8000"); empty: this computer.
  QString endpoint;

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

// An image attached to a message: the file's bytes as they came (never
// re-encoded), stored once by content and shared by every message, branch and
// chat that shows it. width and height are as the image is shown (EXIF
// orientation applied).
struct ChatImage {
  QByteArray bytes;
  QString mime_type;  // "image/png", "image/jpeg", "image/webp", "image/gif", "image/bmp"
  int width = 0;
  int height = 0;

  // The key the store keeps it under: SHA-256 of the bytes.
  QByteArray content_hash() const;
  bool operator==(const ChatImage&) const = default;
};

// One chat as the sidebar lists it.
struct ChatSummary {
  ChatId id{};
  QString title;
  QDateTime created;
  // Last activity: the newest message written or edited (not a rename).
  QDateTime updated;
  ModelUse model;
  // Messages in every branch, not only along the current path.
  int message_count = 0;
  // Set while the chat is soft-deleted (undo is still possible).
  std::optional<QDateTime> deleted;
  bool operator==(const ChatSummary&) const = default;
};

// A chat is a tree of messages: editing and resending a message, or
// regenerating a reply, adds a sibling instead of deleting what followed. The
// chat shows one path from a first message down to a leaf, the current path;
// the store remembers it.
struct Message {
  MessageId id{};
  ChatId chat{};
  // The message this one answers or follows; nullopt for a first message.
  std::optional<MessageId> parent;
  // The depth in the tree: 0 for a first message, the parent's + 1 otherwise.
  // Along a path that is 0, 1, 2, ... without gaps.
  int position = 0;
  Role role = Role::User;
  QString text;
  // Token ids of the rendered turn (prompt template included), empty when not
  // rendered yet or after an edit made them stale.
  std::vector<std::int32_t> tokens;
  QDateTime created;
  QDateTime updated;
  std::optional<GenerationStats> stats;
  // An assistant message: the tool calls its reply made (text is the content
  // around them).
  QList<ToolCall> tool_calls;
  // A Tool message: the call it answers and what happened to it.
  std::optional<ToolResult> tool_result;
  // Images the user attached, in the order attached.
  QList<ChatImage> images;
  bool operator==(const Message&) const = default;
};

// The samplers beyond temperature, top-p and min-p, as a chat keeps them: the
// engine's SamplingSettings says what each does. A chat overrides them as a
// group ("Advanced sampling"); each default turns its sampler off.
struct TunedSampling {
  double dry_multiplier = 0;
  double dry_base = 1.75;
  int dry_allowed_length = 2;
  int dry_range = 0;  // 0: the whole context
  QStringList dry_sequence_breakers{QStringLiteral("\n"), QStringLiteral(":"), QStringLiteral("\""),
                                    QStringLiteral("*")};
  double xtc_threshold = 0.1;
  double xtc_probability = 0;
  double top_n_sigma = 0;
  bool mirostat = false;  // mirostat v2
  double mirostat_tau = 5;
  double mirostat_eta = 0.1;

  // "" when every value is in range, else what is wrong, naming the field.
  QString problem() const;
  // As JSON with the field names above (the chat file's and the store's
  // column's shape); from_json leaves absent keys at their defaults and
  // returns what is wrong with a present one, or "".
  QJsonObject to_json() const;
  static QString from_json(const QJsonObject& object, TunedSampling* out);
  bool operator==(const TunedSampling&) const = default;
};
// The context policies' names as the engine spells them
// (engine::to_string(ContextPolicy)).
inline const QStringList kContextOverflowPolicies{
    QStringLiteral("stop"), QStringLiteral("drop_oldest"), QStringLiteral("truncate_middle")};

// The range of a text's logit bias, as the CLI and the server take it.
inline constexpr double kLogitBiasLimit = 100;

// Settings a chat overrides; each absent one follows the application's
// global setting.
struct ChatSettings {
  std::optional<QString> system_prompt;
  std::optional<double> temperature;
  std::optional<double> top_p;
  std::optional<double> min_p;
  std::optional<double> repetition_penalty;
  std::optional<int> max_new_tokens;
  // The name of a prompt format (chat template) to use instead of the model's.
  std::optional<QString> prompt_format;
  // Tools (MCP) on or off for this chat.
  std::optional<bool> tools_enabled;
  // Tools the user allowed to run in this chat without asking each time, by
  // the key the caller chooses (e.g. "server/tool"); in the order allowed.
  QStringList always_allowed_tools;
  // DRY, XTC, top-nσ and mirostat, overridden together.
  std::optional<TunedSampling> tuned_sampling;
  // What happens when the chat outgrows the context: "stop", "drop_oldest"
  // or "truncate_middle" (kContextOverflowPolicies).
  std::optional<QString> context_overflow;
  // Text the replies must never show, matched without regard to case (the
  // engine's banned strings); empty: none.
  QStringList banned_strings;
  // A bias (-100 to 100) added to the logit of every token of each text, as
  // the model's tokenizer spells it; empty: none.
  QMap<QString, double> logit_bias_text;

  // An empty string when every value is in range, else what is wrong, e.g.
  // "top_p must be greater than 0 and at most 1 (got 1.5)".
  QString problem() const;
  bool is_empty() const { return *this == ChatSettings{}; }
  bool operator==(const ChatSettings&) const = default;
};

// A whole chat detached from the database: what export writes and import reads.
//
// `messages` is the whole tree, each parent before its children. Its ids name
// messages within the document only (from the store they are the store's
// ids; an import gives new ones), and each `parent` names another message of
// the document. A document whose messages have no ids at all (every id is
// MessageId{}) is one branch in list order: what a format without branches
// holds.
struct ChatDocument {
  QString title;
  QDateTime created;
  QDateTime updated;
  ModelUse model;
  QList<Message> messages;
  // The leaf of the current path; nullopt means the last message.
  std::optional<MessageId> current;
  ChatSettings settings;
  bool operator==(const ChatDocument&) const = default;
};

// The current path of `document`: its messages from the first down to
// `current` (or to the last message), in order.
QList<Message> current_path(const ChatDocument& document);

// The messages that share a parent with one message (the first messages of a
// chat are siblings too), oldest first, and where that message is among them:
// what a "< 2/3 >" switcher shows.
struct Siblings {
  QList<MessageId> ids;
  int index = 0;
  bool operator==(const Siblings&) const = default;
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
