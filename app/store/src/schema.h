#pragma once

// The database schema and its history. Version N of the schema is what
// migrations 1..N produce, applied in order from an empty file; an older file
// runs the ones it lacks. The version lives in PRAGMA user_version (part of
// the file header, so it changes in the same transaction as the tables).

#include <QSqlDatabase>
#include <QString>
#include <QStringList>

namespace quire::store::detail {

// PRAGMA application_id of a Quire chat database ("QUIR"), so that a file of
// another program is recognised and refused rather than migrated.
inline constexpr qint64 kApplicationId = 0x51554952;

int current_schema_version();

// The statements of the migration from `version - 1` to `version`.
QStringList migration(int version);

// Whether this SQLite can build the FTS5 trigram index.
bool probe_full_text_search(const QSqlDatabase& db);

// The search index is derived data, kept outside the versioned schema: FTS5
// tables over chats.title and messages.text, filled by triggers. When the
// triggers are missing (new file, a migration rebuilt a table, or the file was
// last used without FTS5) they are created and the index is rebuilt.
bool ensure_search_index(const QSqlDatabase& db, QString* error);
// Without FTS5 the triggers must go: writes would fail on a missing module.
bool drop_search_triggers(const QSqlDatabase& db, QString* error);

}  // namespace quire::store::detail
