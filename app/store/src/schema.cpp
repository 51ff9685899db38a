#include "schema.h"

#include "sql.h"

namespace quire::store::detail {
namespace {

// Version 1: the first layout. Timestamps were ISO-8601 text, messages had
// text only. Kept verbatim: files written by it must still open.
const QStringList kVersion1 = {
    QStringLiteral("CREATE TABLE chats ("
                   " id INTEGER PRIMARY KEY AUTOINCREMENT,"
                   " title TEXT NOT NULL,"
                   " created TEXT NOT NULL,"
                   " updated TEXT NOT NULL)"),
    QStringLiteral("CREATE TABLE messages ("
                   " id INTEGER PRIMARY KEY AUTOINCREMENT,"
                   " chat_id INTEGER NOT NULL REFERENCES chats(id) ON DELETE CASCADE,"
                   " position INTEGER NOT NULL,"
                   " role TEXT NOT NULL,"
                   " text TEXT NOT NULL,"
                   " created TEXT NOT NULL)"),
    QStringLiteral("CREATE INDEX messages_by_chat ON messages(chat_id, position)"),
    QStringLiteral("PRAGMA application_id = %1").arg(kApplicationId),
};

// ISO-8601 text -> milliseconds since the epoch (UTC); unparseable -> NULL.
QString to_ms(const QString& column) {
  return QStringLiteral("CAST(strftime('%s', %1) AS INTEGER) * 1000").arg(column);
}

// Version 2: millisecond timestamps, the model and settings a chat used, soft
// delete, token ids and generation statistics per message, roles checked,
// positions unique. SQLite cannot change column types, so both tables are
// rebuilt (the documented 12-step procedure; foreign keys are off while
// migrations run and checked before the commit).
QStringList version2() {
  return {
      QStringLiteral("CREATE TABLE chats_v2 ("
                     " id INTEGER PRIMARY KEY AUTOINCREMENT,"
                     " title TEXT NOT NULL DEFAULT '',"
                     " created INTEGER NOT NULL,"
                     " updated INTEGER NOT NULL,"
                     " model_dir TEXT NOT NULL DEFAULT '',"
                     " settings TEXT NOT NULL DEFAULT '{}',"
                     " deleted_at INTEGER)"),
      QStringLiteral("INSERT INTO chats_v2 (id, title, created, updated)"
                     " SELECT id, title, COALESCE(%1, 0), COALESCE(%2, %1, 0) FROM chats")
          .arg(to_ms(QStringLiteral("created")), to_ms(QStringLiteral("updated"))),
      QStringLiteral("CREATE TABLE messages_v2 ("
                     " id INTEGER PRIMARY KEY AUTOINCREMENT,"
                     " chat_id INTEGER NOT NULL REFERENCES chats(id) ON DELETE CASCADE,"
                     " position INTEGER NOT NULL,"
                     " role TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant')),"
                     " text TEXT NOT NULL DEFAULT '',"
                     " tokens BLOB,"
                     " created INTEGER NOT NULL,"
                     " updated INTEGER NOT NULL,"
                     " stats TEXT,"
                     " UNIQUE (chat_id, position))"),
      QStringLiteral("INSERT INTO messages_v2 (id, chat_id, position, role, text, created, updated)"
                     " SELECT id, chat_id, position, role, text, COALESCE(%1, 0), COALESCE(%1, 0)"
                     " FROM messages")
          .arg(to_ms(QStringLiteral("created"))),
      QStringLiteral("DROP TABLE messages"),
      QStringLiteral("DROP TABLE chats"),
      QStringLiteral("ALTER TABLE chats_v2 RENAME TO chats"),
      QStringLiteral("ALTER TABLE messages_v2 RENAME TO messages"),
      // The sidebar's order; deleted chats are not in it.
      QStringLiteral("CREATE INDEX chats_by_activity ON chats(updated DESC, id DESC)"
                     " WHERE deleted_at IS NULL"),
      QStringLiteral(
          "CREATE INDEX chats_deleted ON chats(deleted_at) WHERE deleted_at IS NOT NULL"),
  };
}

// Version 3: chats are trees of messages, and chats carry settings of their
// own. Each message gets its parent (a chat's messages so far become one
// branch: each follows the one before it) and `selected`, a per-chat sequence
// number: the current path starts at the first message selected last and
// goes down to the child selected last, so the path survives a restart and
// switching to a sibling returns to the branch last seen below it. `position`
// becomes the depth, so positions repeat across branches and the UNIQUE
// constraint goes: the table is rebuilt. Deleted branches wait in
// deleted_messages (with their ids, for undo) until purged.
QStringList version3() {
  return {
      QStringLiteral("CREATE TABLE messages_v3 ("
                     " id INTEGER PRIMARY KEY AUTOINCREMENT,"
                     " chat_id INTEGER NOT NULL REFERENCES chats(id) ON DELETE CASCADE,"
                     " parent_id INTEGER REFERENCES messages_v3(id),"
                     " position INTEGER NOT NULL,"
                     " selected INTEGER NOT NULL DEFAULT 0,"
                     " role TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant')),"
                     " text TEXT NOT NULL DEFAULT '',"
                     " tokens BLOB,"
                     " created INTEGER NOT NULL,"
                     " updated INTEGER NOT NULL,"
                     " stats TEXT)"),
      QStringLiteral("INSERT INTO messages_v3 (id, chat_id, parent_id, position, selected, role,"
                     " text, tokens, created, updated, stats)"
                     " SELECT id, chat_id, LAG(id) OVER w, ROW_NUMBER() OVER w - 1, 1, role,"
                     " text, tokens, created, updated, stats"
                     " FROM messages WINDOW w AS (PARTITION BY chat_id ORDER BY position)"),
      QStringLiteral("DROP TABLE messages"),
      QStringLiteral("ALTER TABLE messages_v3 RENAME TO messages"),
      QStringLiteral("CREATE INDEX messages_by_chat ON messages(chat_id, position)"),
      QStringLiteral("CREATE INDEX messages_by_parent ON messages(parent_id)"),
      QStringLiteral("CREATE TABLE deleted_messages ("
                     " id INTEGER PRIMARY KEY,"
                     " chat_id INTEGER NOT NULL REFERENCES chats(id) ON DELETE CASCADE,"
                     " parent_id INTEGER,"
                     " position INTEGER NOT NULL,"
                     " selected INTEGER NOT NULL,"
                     " role TEXT NOT NULL,"
                     " text TEXT NOT NULL,"
                     " tokens BLOB,"
                     " created INTEGER NOT NULL,"
                     " updated INTEGER NOT NULL,"
                     " stats TEXT,"
                     // The message whose deletion took this one along; undo names it.
                     " branch INTEGER NOT NULL,"
                     " deleted_at INTEGER NOT NULL)"),
      QStringLiteral("CREATE INDEX deleted_messages_by_branch ON deleted_messages(branch)"),
      QStringLiteral("CREATE INDEX deleted_messages_by_chat ON deleted_messages(chat_id)"),
      QStringLiteral("ALTER TABLE chats ADD COLUMN system_prompt TEXT"),
      QStringLiteral("ALTER TABLE chats ADD COLUMN temperature REAL"),
      QStringLiteral("ALTER TABLE chats ADD COLUMN top_p REAL"),
      QStringLiteral("ALTER TABLE chats ADD COLUMN min_p REAL"),
      QStringLiteral("ALTER TABLE chats ADD COLUMN repetition_penalty REAL"),
      QStringLiteral("ALTER TABLE chats ADD COLUMN max_new_tokens INTEGER"),
      QStringLiteral("ALTER TABLE chats ADD COLUMN prompt_format TEXT"),
  };
}

// Version 4: tool calls and their results. A message may have the role
// "tool" (the CHECK constraint changes, so the table is rebuilt as in
// version 3; ids, parents and selection stay), an assistant message keeps its
// calls as a JSON array in tool_calls, a tool message what it answers and
// how the call went as a JSON object in tool_result; deleted branches keep
// both. Chats get tools on or off and the tools always allowed in them.
QStringList version4() {
  return {
      QStringLiteral("CREATE TABLE messages_v4 ("
                     " id INTEGER PRIMARY KEY AUTOINCREMENT,"
                     " chat_id INTEGER NOT NULL REFERENCES chats(id) ON DELETE CASCADE,"
                     " parent_id INTEGER REFERENCES messages_v4(id),"
                     " position INTEGER NOT NULL,"
                     " selected INTEGER NOT NULL DEFAULT 0,"
                     " role TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),"
                     " text TEXT NOT NULL DEFAULT '',"
                     " tokens BLOB,"
                     " created INTEGER NOT NULL,"
                     " updated INTEGER NOT NULL,"
                     " stats TEXT,"
                     " tool_calls TEXT,"
                     " tool_result TEXT)"),
      QStringLiteral("INSERT INTO messages_v4 (id, chat_id, parent_id, position, selected, role,"
                     " text, tokens, created, updated, stats)"
                     " SELECT id, chat_id, parent_id, position, selected, role,"
                     " text, tokens, created, updated, stats FROM messages"),
      QStringLiteral("DROP TABLE messages"),
      QStringLiteral("ALTER TABLE messages_v4 RENAME TO messages"),
      QStringLiteral("CREATE INDEX messages_by_chat ON messages(chat_id, position)"),
      QStringLiteral("CREATE INDEX messages_by_parent ON messages(parent_id)"),
      QStringLiteral("ALTER TABLE deleted_messages ADD COLUMN tool_calls TEXT"),
      QStringLiteral("ALTER TABLE deleted_messages ADD COLUMN tool_result TEXT"),
      QStringLiteral("ALTER TABLE chats ADD COLUMN tools_enabled INTEGER"),
      QStringLiteral("ALTER TABLE chats ADD COLUMN always_allowed_tools TEXT"),
  };
}

const QStringList kSearchTriggerNames = {
    QStringLiteral("chat_search_insert"),    QStringLiteral("chat_search_delete"),
    QStringLiteral("chat_search_update"),    QStringLiteral("message_search_insert"),
    QStringLiteral("message_search_delete"), QStringLiteral("message_search_update"),
};

// External-content FTS5 tables: the index stores trigrams only, the text stays
// in chats/messages. The trigram tokenizer folds case (Unicode, not only
// ASCII) and matches any substring of three or more characters.
QStringList search_index_statements() {
  QStringList statements = {
      QStringLiteral("CREATE VIRTUAL TABLE IF NOT EXISTS chat_search USING fts5("
                     "title, content='chats', content_rowid='id', tokenize='trigram')"),
      QStringLiteral("CREATE VIRTUAL TABLE IF NOT EXISTS message_search USING fts5("
                     "text, content='messages', content_rowid='id', tokenize='trigram')"),
  };
  for (const QString& trigger : kSearchTriggerNames) {
    statements << QStringLiteral("DROP TRIGGER IF EXISTS %1").arg(trigger);
  }
  const auto triggers = [&](const QString& index, const QString& table, const QString& column) {
    const QString remove =
        QStringLiteral("INSERT INTO %1(%1, rowid, %2) VALUES ('delete', old.id, old.%2);")
            .arg(index, column);
    const QString add =
        QStringLiteral("INSERT INTO %1(rowid, %2) VALUES (new.id, new.%2);").arg(index, column);
    statements << QStringLiteral("CREATE TRIGGER %1_insert AFTER INSERT ON %2 BEGIN %3 END")
                      .arg(index, table, add)
               << QStringLiteral("CREATE TRIGGER %1_delete AFTER DELETE ON %2 BEGIN %3 END")
                      .arg(index, table, remove)
               << QStringLiteral(
                      "CREATE TRIGGER %1_update AFTER UPDATE OF %3 ON %2 BEGIN %4 %5 END")
                      .arg(index, table, column, remove, add);
  };
  triggers(QStringLiteral("chat_search"), QStringLiteral("chats"), QStringLiteral("title"));
  triggers(QStringLiteral("message_search"), QStringLiteral("messages"), QStringLiteral("text"));
  statements << QStringLiteral("INSERT INTO chat_search(chat_search) VALUES ('rebuild')")
             << QStringLiteral("INSERT INTO message_search(message_search) VALUES ('rebuild')");
  return statements;
}

int count_search_triggers(const QSqlDatabase& db, QString* error) {
  QStringList quoted;
  for (const QString& name : kSearchTriggerNames)
    quoted << QLatin1Char('\'') + name + QLatin1Char('\'');
  const QVariant count = query_value(
      db,
      QStringLiteral("SELECT COUNT(*) FROM sqlite_master WHERE type = 'trigger' AND name IN (%1)")
          .arg(quoted.join(QLatin1Char(','))),
      error);
  return count.isValid() ? count.toInt() : -1;
}

}  // namespace

// Version 5: a chat's own DRY, XTC, top-nσ and mirostat settings, one JSON
// object (chat_json.cpp's TunedSampling shape) or NULL to follow the global ones.
QStringList version5() {
  return {QStringLiteral("ALTER TABLE chats ADD COLUMN tuned_sampling TEXT")};
}

// Version 6: what the chat does when it outgrows the context (a policy's
// name, NULL: the global setting).
QStringList version6() {
  return {QStringLiteral("ALTER TABLE chats ADD COLUMN context_overflow TEXT")};
}

// Version 7: the preset a chat's settings were last chosen from (its name).
QStringList version7() {
  return {QStringLiteral("ALTER TABLE chats ADD COLUMN preset TEXT")};
}

// Version 8: the text a chat's replies must never show (a JSON array of
// strings) and its logit biases by text (a JSON object of text to bias);
// NULL: none.
QStringList version8() {
  return {QStringLiteral("ALTER TABLE chats ADD COLUMN banned_strings TEXT"),
          QStringLiteral("ALTER TABLE chats ADD COLUMN logit_bias_text TEXT")};
}

// Version 9: images attached to messages. Each image is stored once, keyed
// by the SHA-256 of its bytes, and messages list theirs in order, so a branch,
// an edited copy or a branched chat shares the bytes. message_images has no
// foreign key to messages because a deleted branch (deleted_messages, same
// ids) keeps its images for undo; triggers drop a message's list when its
// row is gone from both tables, and an image when no list names it any more.
QStringList version9() {
  return {
      QStringLiteral("CREATE TABLE images ("
                     " hash BLOB PRIMARY KEY,"
                     " bytes BLOB NOT NULL,"
                     " mime_type TEXT NOT NULL,"
                     " width INTEGER NOT NULL,"
                     " height INTEGER NOT NULL)"),
      QStringLiteral("CREATE TABLE message_images ("
                     " message_id INTEGER NOT NULL,"
                     " ordinal INTEGER NOT NULL,"
                     " image_hash BLOB NOT NULL REFERENCES images(hash),"
                     " PRIMARY KEY (message_id, ordinal))"),
      QStringLiteral("CREATE INDEX message_images_by_image ON message_images(image_hash)"),
      QStringLiteral("CREATE TRIGGER message_images_message_gone AFTER DELETE ON messages"
                     " WHEN NOT EXISTS (SELECT 1 FROM deleted_messages WHERE id = old.id)"
                     " BEGIN DELETE FROM message_images WHERE message_id = old.id; END"),
      QStringLiteral("CREATE TRIGGER message_images_deleted_gone AFTER DELETE ON deleted_messages"
                     " WHEN NOT EXISTS (SELECT 1 FROM messages WHERE id = old.id)"
                     " BEGIN DELETE FROM message_images WHERE message_id = old.id; END"),
      QStringLiteral("CREATE TRIGGER images_unused AFTER DELETE ON message_images"
                     " WHEN NOT EXISTS (SELECT 1 FROM message_images"
                     " WHERE image_hash = old.image_hash)"
                     " BEGIN DELETE FROM images WHERE hash = old.image_hash; END"),
  };
}

int current_schema_version() {
  return 9;
}

QStringList migration(int version) {
  switch (version) {
    case 1:
      return kVersion1;
    case 2:
      return version2();
    case 3:
      return version3();
    case 4:
      return version4();
    case 5:
      return version5();
    case 6:
      return version6();
    case 7:
      return version7();
    case 8:
      return version8();
    case 9:
      return version9();
    default:
      return {};
  }
}

bool probe_full_text_search(const QSqlDatabase& db) {
  QString ignored;
  if (!exec_once(db,
                 QStringLiteral("CREATE VIRTUAL TABLE temp.quire_fts_probe USING fts5("
                                "x, tokenize='trigram')"),
                 &ignored)) {
    return false;
  }
  exec_once(db, QStringLiteral("DROP TABLE temp.quire_fts_probe"), &ignored);
  return true;
}

bool ensure_search_index(const QSqlDatabase& db, QString* error) {
  const int present = count_search_triggers(db, error);
  if (present < 0) return false;
  if (present == kSearchTriggerNames.size()) return true;
  Transaction transaction(db);
  if (!transaction.ok()) {
    *error = transaction.error();
    return false;
  }
  for (const QString& statement : search_index_statements()) {
    if (!exec_once(db, statement, error)) return false;
  }
  if (!transaction.commit()) {
    *error = transaction.error();
    return false;
  }
  return true;
}

bool drop_search_triggers(const QSqlDatabase& db, QString* error) {
  for (const QString& trigger : kSearchTriggerNames) {
    if (!exec_once(db, QStringLiteral("DROP TRIGGER IF EXISTS %1").arg(trigger), error)) {
      return false;
    }
  }
  return true;
}

}  // namespace quire::store::detail
