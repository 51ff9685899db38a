#pragma once

// The chat history store: one SQLite file (through QtSql) in the user's data
// directory. It lives on the GUI thread and is synchronous; every write is a
// transaction that is committed (and synced) before the call returns, so what
// a call reported as done survives a crash or a power cut.

#include <QDateTime>
#include <QObject>
#include <QString>
#include <functional>
#include <memory>
#include <optional>
#include <span>

#include "quire/app/store/chat_types.h"

namespace quire::store {

namespace detail {
struct StoreState;
}

enum class StoreError {
  None,
  DriverMissing,    // Qt's SQLite driver plugin is not installed
  CannotOpen,       // the file or its folder cannot be created, read or written
  NotADatabase,     // the file is not an SQLite database
  Damaged,          // SQLite reports it malformed, or quick_check fails
  NewerVersion,     // written by a newer Quire; its schema is not understood
  ForeignDatabase,  // an SQLite file that belongs to another program
  MigrationFailed,  // an upgrade step failed; the file was left as it was
  NotOpen,
  NotFound,  // no such chat or message (or the chat is deleted)
  InvalidArgument,
  Sql,  // a statement failed on an open database
};

struct StoreOptions {
  // The database file; empty means ChatStore::default_path().
  QString path;
  // Use an FTS5 trigram index for search when SQLite has FTS5. Off, or when
  // SQLite lacks it, search falls back to LIKE.
  bool full_text_search = true;
  // Before upgrading an older file, keep a copy of it next to it
  // ("<name>.before-v<N>.sqlite"), made with VACUUM INTO.
  bool backup_before_migration = true;
  // Wall clock for the timestamps written; tests inject a fixed one.
  std::function<QDateTime()> now;
};

class ChatStore : public QObject {
  Q_OBJECT

 public:
  explicit ChatStore(QObject* parent = nullptr);
  ~ChatStore() override;

  // The schema version this build writes and understands.
  static int schema_version();
  // <AppDataLocation>/chats.sqlite
  static QString default_path();

  // Opens (creating if needed), checks and upgrades the database. A file that
  // is damaged, foreign or from a newer version is refused and left untouched:
  // open() returns false and error()/error_string() say why and what to do.
  bool open(const StoreOptions& options = {});
  void close();
  bool is_open() const;
  QString path() const;
  // Whether search uses the FTS5 index (else LIKE).
  bool full_text_search() const;

  // The last failure of any call; StoreError::None after a success.
  StoreError error() const;
  QString error_string() const;

  // For a refused file: moves it (with its -wal/-shm companions) to
  // "<name>.<label>-<yyyyMMdd-HHmmss>.<suffix>" beside it, so that open() on
  // the original path starts a fresh history while the old file is kept. The
  // store must not have the file open. Returns the new path, or an empty
  // string with *error set.
  static QString set_aside(const QString& path, const QString& label = QStringLiteral("set-aside"),
                           QString* error = nullptr);

  // --- chats ---
  std::optional<ChatId> create_chat(const QString& title, const ModelUse& model = {});
  bool rename_chat(ChatId chat, const QString& title);
  bool set_chat_model(ChatId chat, const ModelUse& model);
  // Soft delete: the chat disappears from lists and search, restore_chat()
  // brings it back. purge_deleted() removes it for good.
  bool delete_chat(ChatId chat);
  bool restore_chat(ChatId chat);
  // Removes chats soft-deleted before `deleted_before`, and branches deleted
  // (delete_branch()) before it; returns how many chats, -1 on error.
  int purge_deleted(const QDateTime& deleted_before);
  // purge_deleted() for chats deleted before this store was opened: undo works
  // within a session; the next session cleans up.
  int purge_previous_sessions();

  // Live chats, most recent activity first (ties: newest id first).
  QList<ChatSummary> list_chats() const;
  QList<ChatSummary> deleted_chats() const;
  // Any chat, deleted ones included (then `deleted` is set).
  std::optional<ChatSummary> chat(ChatId chat) const;

  // Case-insensitive substring search in titles and message text of live chats.
  QList<SearchHit> search(const QString& text, int limit = 200) const;

  // Settings the chat overrides (absent ones follow the global settings).
  std::optional<ChatSettings> chat_settings(ChatId chat) const;
  // Replaces all of them; InvalidArgument (nothing changed) when a value is
  // out of range, see ChatSettings::problem().
  bool set_chat_settings(ChatId chat, const ChatSettings& settings);
  // The name of the preset the chat's settings were last chosen from (the
  // settings may have been edited since); nullopt: none. In
  // chat_store_preset.cpp.
  std::optional<QString> chat_preset(ChatId chat) const;
  bool set_chat_preset(ChatId chat, const std::optional<QString>& preset);

  // --- messages along the current path ---
  // A chat is a tree of messages (see Message); these work on its current
  // path, the branch the chat shows.
  //
  // Appends below the current leaf, which it becomes; returns after the
  // commit. The user's message goes through here before generation starts,
  // with the images attached to it (stored once by content; InvalidArgument,
  // nothing stored, when one is unfit: see ChatImage).
  std::optional<MessageId> append_message(ChatId chat, Role role, const QString& text,
                                          std::span<const std::int32_t> tokens = {},
                                          const QList<ChatImage>& images = {});
  // The current path (the same as current_path()).
  QList<Message> messages(ChatId chat) const;
  std::optional<Message> message(MessageId message) const;

  enum class Following { Keep, Drop };
  // Replaces a message's text; its token ids become stale and are cleared.
  // Following::Drop also removes every message below it, in every branch, in
  // the same transaction. (add_message() keeps them: edit as a sibling.)
  bool edit_message(MessageId message, const QString& text, Following following = Following::Keep);
  // Removes every message below `message`, in every branch.
  bool truncate_after(MessageId message);
  bool set_message_tokens(MessageId message, std::span<const std::int32_t> tokens);

  // Creates the assistant message a generation streams into, empty, with
  // stop reason kStopInterrupted until it finishes. Hand it to a ReplyWriter.
  std::optional<MessageId> begin_reply(ChatId chat, const QString& model);
  // Regenerate in place: removes the current leaf if it is an assistant reply
  // and begins a new reply in its place, in one transaction.
  // (begin_reply_after() keeps the old reply as a sibling.)
  std::optional<MessageId> replace_last_reply(ChatId chat, const QString& model);
  // Overwrites a reply's text and tokens (and stats when given). Used by
  // ReplyWriter; fails with NotFound once the message is gone.
  bool write_reply(MessageId message, const QString& text, std::span<const std::int32_t> tokens,
                   const std::optional<GenerationStats>& stats);

  // Tool calls. Records the calls an assistant message's reply made (an empty
  // list removes them); InvalidArgument for a message that is not a reply.
  bool set_tool_calls(MessageId message, const QList<ToolCall>& calls);
  // Appends a Tool message below the current leaf: `text` is the result the
  // model reads, `result` the call it answers and what happened to it.
  // InvalidArgument when the leaf is not an assistant message with a call of
  // that id or a tool message that follows one.
  std::optional<MessageId> append_tool_result(ChatId chat, const ToolResult& result,
                                              const QString& text);
  // Overwrites a Tool message's result and status (a call that ran after its
  // message was written); InvalidArgument for a message that is no tool result.
  bool set_tool_result(MessageId message, const ToolResult& result, const QString& text);

  // --- the tree of messages ---
  // The first message down to the current leaf. At each step the path takes
  // the child selected last: added last, or switched to last with
  // select_message(). The choice is stored, so it survives a restart.
  QList<Message> current_path(ChatId chat) const;
  // Every message of every branch, each parent before its children (by
  // depth, then oldest first).
  QList<Message> message_tree(ChatId chat) const;
  // The messages that share `message`'s parent, oldest first, and its index.
  std::optional<Siblings> siblings(MessageId message) const;
  // Switches the current path to run through `message`, then down the
  // children selected last below it to a leaf: the "<" and ">" of a
  // switcher select the neighbouring sibling.
  bool select_message(MessageId message);
  // Adds a message below `parent` (nullopt: another first message) of a live
  // chat, after its other children, and makes it the current leaf. Edit and
  // resend adds the edited text as a sibling of the original:
  // add_message(chat, original.parent, Role::User, text).
  // The images go with it as append_message() takes them; an edited message
  // passes the original's on, and they are shared, not copied.
  std::optional<MessageId> add_message(ChatId chat, std::optional<MessageId> parent, Role role,
                                       const QString& text,
                                       std::span<const std::int32_t> tokens = {},
                                       const QList<ChatImage>& images = {});
  // begin_reply() below `parent` instead of below the current leaf, which it
  // becomes. Regenerating keeps the old reply as a sibling of the new one:
  // begin_reply_after(*old_reply.parent, model).
  std::optional<MessageId> begin_reply_after(MessageId parent, const QString& model);
  // "Branch from here": a new chat, titled `title`, holding copies of the
  // path from the first message down to `message` (text, token ids,
  // statistics and times), with the chat's model and settings.
  std::optional<ChatId> branch_chat(MessageId message, const QString& title);
  // Removes `message` and every message below it; the rest of the chat stays.
  // The current path falls back to the sibling selected last before it, or
  // ends at its parent. restore_branch() with the same id undoes it, exactly:
  // same ids, text, token ids and selection. purge_deleted() removes it for
  // good.
  bool delete_branch(MessageId message);
  // NotFound when there is no such deleted branch, or the message it
  // followed has been removed since.
  bool restore_branch(MessageId message);

  // --- whole chats ---
  // The whole tree, its current leaf and the chat's settings.
  std::optional<ChatDocument> document(ChatId chat) const;
  // Adds a chat with its messages (an import), new ids for all, the
  // document's current path selected; one transaction. InvalidArgument when
  // a parent does not come before its child or a setting is out of range.
  std::optional<ChatId> insert_document(const ChatDocument& document);
  // Adds several chats in one transaction: all of them, or none when one
  // fails (an import of many conversations is never left half done).
  std::optional<QList<ChatId>> insert_documents(const QList<ChatDocument>& documents);

 signals:
  // The set of chats changed wholesale (open, close).
  void chats_reset();
  // Created, imported or restored.
  void chat_added(quire::store::ChatId chat);
  // Title, model, messages or activity changed.
  void chat_changed(quire::store::ChatId chat);
  // Deleted (soft or for good).
  void chat_removed(quire::store::ChatId chat);

 private:
  std::unique_ptr<detail::StoreState> d_;
};

}  // namespace quire::store
