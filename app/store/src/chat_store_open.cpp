// Opening the history: refuse what is not ours or not sound before anything is
// written, upgrade older files step by step, then switch on WAL and syncing.

#include <QAtomicInteger>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSqlError>
#include <QStandardPaths>

#include "chat_store_impl.h"
#include "file_names.h"
#include "schema.h"

namespace quire::store {
namespace {

constexpr char kDriver[] = "QSQLITE";
// The first 16 bytes of every SQLite 3 database file.
constexpr char kSqliteMagic[] = "SQLite format 3";
// SQLITE_NOTADB, as QSqlError::nativeErrorCode() gives it.
constexpr char kNotADatabaseCode[] = "26";

const QString kKeepAside = QStringLiteral(
    "Quire has not changed it. Choose \"Start a new history\" to keep this file aside under a new "
    "name and begin an empty history");

QString new_connection_name() {
  static QAtomicInteger<quint64> counter;
  return QStringLiteral("quire-chat-store-%1").arg(counter.fetchAndAddRelaxed(1));
}

// Checks the file before SQLite sees it: SQLite would happily turn an empty
// path into a new database, and must never be asked to write into a stranger.
bool check_file(const detail::StoreState& d) {
  const QFileInfo info(d.path);
  if (!info.exists()) {
    if (QDir().mkpath(info.absolutePath())) return true;
    return d.fail(StoreError::CannotOpen,
                  QStringLiteral("Cannot create the folder %1 for the chat history. Check that it "
                                 "is writable, or choose another location.")
                      .arg(info.absolutePath()));
  }
  if (!info.isFile()) {
    return d.fail(StoreError::CannotOpen,
                  QStringLiteral("The chat history path %1 is not a file.").arg(d.path));
  }
  if (info.size() == 0) return true;  // an empty file is an empty SQLite database
  QFile file(d.path);
  if (!file.open(QIODevice::ReadOnly)) {
    return d.fail(
        StoreError::CannotOpen,
        QStringLiteral("Cannot read the chat history %1: %2.").arg(d.path, file.errorString()));
  }
  const QByteArray header = file.read(100);
  if (header.size() < 100 || !header.startsWith(QByteArray(kSqliteMagic, sizeof kSqliteMagic))) {
    return d.fail(StoreError::NotADatabase,
                  QStringLiteral("%1 is not a chat history database (it is not an SQLite file). "
                                 "%2, or check which program wrote this file.")
                      .arg(d.path, kKeepAside));
  }
  if (!info.isWritable()) {
    return d.fail(StoreError::CannotOpen,
                  QStringLiteral("The chat history %1 is read-only. Make it writable, or start a "
                                 "new history elsewhere.")
                      .arg(d.path));
  }
  return true;
}

bool damaged(const detail::StoreState& d, const QString& report) {
  return d.fail(StoreError::Damaged,
                QStringLiteral("The chat history %1 is damaged (SQLite reports: %2). %3 (a tool "
                               "such as \"sqlite3 .recover\" may rescue chats from the old file).")
                    .arg(d.path, report, kKeepAside));
}

// Reads only, on `db`, a read-only connection.
bool check_database(const detail::StoreState& d, const QSqlDatabase& db, int* version) {
  QSqlQuery check(db);
  if (!check.exec(QStringLiteral("PRAGMA quick_check"))) {
    if (check.lastError().nativeErrorCode() == QLatin1String(kNotADatabaseCode)) {
      return d.fail(StoreError::NotADatabase,
                    QStringLiteral("%1 is not a chat history database (SQLite cannot read it). "
                                   "%2.")
                        .arg(d.path, kKeepAside));
    }
    return damaged(d, detail::describe(check.lastError()));
  }
  QStringList problems;
  while (check.next() && problems.size() < 3) {
    const QString line = check.value(0).toString();
    if (line != QLatin1String("ok")) problems << line;
  }
  check.finish();
  if (!problems.isEmpty()) return damaged(d, problems.join(QStringLiteral("; ")));

  QString error;
  const QVariant app_id = detail::query_value(db, QStringLiteral("PRAGMA application_id"), &error);
  const QVariant user_version =
      detail::query_value(db, QStringLiteral("PRAGMA user_version"), &error);
  const QVariant objects = detail::query_value(
      db, QStringLiteral("SELECT COUNT(*) FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'"),
      &error);
  if (!app_id.isValid() || !user_version.isValid() || !objects.isValid()) return damaged(d, error);

  *version = user_version.toInt();
  const bool ours = app_id.toLongLong() == detail::kApplicationId;
  // Files of version 0 with tables in them, or with another application id,
  // were not written by Quire.
  if ((app_id.toLongLong() != 0 && !ours) || (*version == 0 && objects.toInt() > 0)) {
    return d.fail(StoreError::ForeignDatabase,
                  QStringLiteral("%1 is an SQLite database of another program, not a Quire chat "
                                 "history. %2, or choose another file.")
                      .arg(d.path, kKeepAside));
  }
  if (*version > detail::current_schema_version()) {
    return d.fail(StoreError::NewerVersion,
                  QStringLiteral("The chat history %1 was written by a newer version of Quire "
                                 "(schema version %2; this version reads up to %3). Quire has not "
                                 "changed it. Update Quire to open it, or choose \"Start a new "
                                 "history\" to keep this file aside for the newer version and "
                                 "begin an empty history.")
                      .arg(d.path)
                      .arg(*version)
                      .arg(detail::current_schema_version()));
  }
  return true;
}

// The checks run on a read-only connection: closing it neither folds a log
// into the file nor deletes the log, so a refused file and its -wal stay
// exactly as they were. SQLite may rebuild the -shm index (it holds no data),
// and for a file in WAL mode it creates an empty -wal and an -shm that a
// read-only connection cannot remove; those are removed here.
bool inspect(const detail::StoreState& d, int* version) {
  const QString name = new_connection_name() + QStringLiteral("-inspect");
  const QString wal = d.path + QStringLiteral("-wal");
  const QString shm = d.path + QStringLiteral("-shm");
  const bool had_wal = QFileInfo::exists(wal);
  const bool had_shm = QFileInfo::exists(shm);
  bool ok = false;
  {
    QSqlDatabase db = QSqlDatabase::addDatabase(QLatin1String(kDriver), name);
    db.setDatabaseName(d.path);
    db.setConnectOptions(QStringLiteral("QSQLITE_OPEN_READONLY;QSQLITE_BUSY_TIMEOUT=5000"));
    if (db.open()) {
      ok = check_database(d, db, version);
    } else {
      d.fail(StoreError::CannotOpen, QStringLiteral("Cannot open the chat history %1: %2.")
                                         .arg(d.path, detail::describe(db.lastError())));
    }
    db.close();
  }
  QSqlDatabase::removeDatabase(name);
  if (!had_wal && QFileInfo(wal).size() == 0 && QFile::remove(wal) && !had_shm) QFile::remove(shm);
  return ok;
}

// One migration per transaction, each checked for dangling references before
// its commit: a failed step is rolled back completely.
bool run_migrations(const detail::StoreState& d, int from) {
  const int to = detail::current_schema_version();
  QString backup;
  if (from > 0 && d.options.backup_before_migration) {
    backup = detail::unused_sibling(d.path, QStringLiteral("before-v%1").arg(to));
    QString error;
    QString quoted = backup;
    quoted.replace(QLatin1Char('\''), QStringLiteral("''"));
    if (!detail::exec_once(d.db, QStringLiteral("VACUUM INTO '%1'").arg(quoted), &error)) {
      return d.fail(StoreError::MigrationFailed,
                    QStringLiteral("Could not keep a copy of the chat history %1 at %2 before "
                                   "upgrading it (%3). Quire has not changed it; free some disk "
                                   "space and try again.")
                        .arg(d.path, backup, error));
    }
  }
  QString error;
  // Table rebuilds drop and rename tables that others reference.
  detail::exec_once(d.db, QStringLiteral("PRAGMA foreign_keys = OFF"), &error);
  for (int version = from + 1; version <= to; ++version) {
    detail::Transaction transaction(d.db);
    bool ok = transaction.ok();
    if (!ok) error = transaction.error();
    for (const QString& statement : detail::migration(version)) {
      if (!ok) break;
      ok = detail::exec_once(d.db, statement, &error);
    }
    if (ok) {
      ok = detail::exec_once(d.db, QStringLiteral("PRAGMA user_version = %1").arg(version), &error);
    }
    if (ok) {
      QSqlQuery dangling(d.db);
      ok = dangling.exec(QStringLiteral("PRAGMA foreign_key_check"));
      if (!ok) {
        error = detail::describe(dangling.lastError());
      } else if (dangling.next()) {
        ok = false;
        error = QStringLiteral("a row of %1 refers to a missing %2")
                    .arg(dangling.value(0).toString(), dangling.value(2).toString());
      }
    }
    if (ok && !transaction.commit()) {
      ok = false;
      error = transaction.error();
    }
    if (!ok) {
      const QString kept = backup.isEmpty() ? QString()
                                            : QStringLiteral(
                                                  " A copy from before the upgrade is "
                                                  "at %1.")
                                                  .arg(backup);
      return d.fail(StoreError::MigrationFailed,
                    QStringLiteral("Could not upgrade the chat history %1 to schema version %2 "
                                   "(%3). The failed step was undone; the file is at version %4."
                                   "%5 Please report this; meanwhile \"Start a new history\" "
                                   "keeps this file aside and begins an empty one.")
                        .arg(d.path)
                        .arg(version)
                        .arg(error)
                        .arg(version - 1)
                        .arg(kept));
    }
  }
  return true;
}

// WAL: readers never block the writer and a commit appends to the log instead
// of rewriting pages. synchronous=FULL syncs the log on every commit, so a
// committed message survives a power cut, not only a crash; commits are rare
// (a message, or a streaming reply once a second), so the cost is small.
bool configure(const detail::StoreState& d) {
  QString error;
  const QVariant mode =
      detail::query_value(d.db, QStringLiteral("PRAGMA journal_mode = WAL"), &error);
  if (!mode.isValid()) return d.fail_sql(QStringLiteral("switch on write-ahead logging"), error);
  if (mode.toString() != QLatin1String("wal")) {
    // Some network file systems cannot share the WAL index. The rollback
    // journal is as safe, only slower; carry on with it.
    qWarning("chat store: %s stays in journal mode %s", qPrintable(d.path),
             qPrintable(mode.toString()));
  }
  if (!detail::exec_once(d.db, QStringLiteral("PRAGMA synchronous = FULL"), &error) ||
      !detail::exec_once(d.db, QStringLiteral("PRAGMA foreign_keys = ON"), &error)) {
    return d.fail_sql(QStringLiteral("configure the connection"), error);
  }
  return true;
}

}  // namespace

ChatStore::ChatStore(QObject* parent)
    : QObject(parent), d_(std::make_unique<detail::StoreState>()) {}

ChatStore::~ChatStore() {
  close();
}

int ChatStore::schema_version() {
  return detail::current_schema_version();
}

QString ChatStore::default_path() {
  return QDir(QStandardPaths::writableLocation(QStandardPaths::AppDataLocation))
      .filePath(QStringLiteral("chats.sqlite"));
}

bool ChatStore::is_open() const {
  return d_->open;
}
QString ChatStore::path() const {
  return d_->path;
}
bool ChatStore::full_text_search() const {
  return d_->fts;
}
StoreError ChatStore::error() const {
  return d_->error;
}
QString ChatStore::error_string() const {
  return d_->error_string;
}

bool ChatStore::open(const StoreOptions& options) {
  close();
  d_->options = options;
  d_->path = QFileInfo(options.path.isEmpty() ? default_path() : options.path).absoluteFilePath();
  if (!QSqlDatabase::isDriverAvailable(QLatin1String(kDriver))) {
    return d_->fail(StoreError::DriverMissing,
                    QStringLiteral("Qt's SQLite driver is not installed, so the chat history "
                                   "cannot be opened (on Debian: apt install libqt6sql6-sqlite)."));
  }
  if (!check_file(*d_)) return false;
  int version = 0;
  if (QFileInfo::exists(d_->path) && !inspect(*d_, &version)) return false;

  d_->connection = new_connection_name();
  d_->db = QSqlDatabase::addDatabase(QLatin1String(kDriver), d_->connection);
  d_->db.setDatabaseName(d_->path);
  d_->db.setConnectOptions(QStringLiteral("QSQLITE_BUSY_TIMEOUT=5000"));
  bool ok = d_->db.open();
  if (!ok) {
    d_->fail(StoreError::CannotOpen, QStringLiteral("Cannot open the chat history %1: %2.")
                                         .arg(d_->path, detail::describe(d_->db.lastError())));
  }
  ok = ok && (version == schema_version() || run_migrations(*d_, version));
  ok = ok && configure(*d_);
  if (!ok) {
    const StoreError kind = d_->error;
    const QString message = d_->error_string;
    close();
    d_->fail(kind, message);
    return false;
  }

  QString error;
  d_->fts = options.full_text_search && detail::probe_full_text_search(d_->db) &&
            detail::ensure_search_index(d_->db, &error);
  if (!d_->fts && !detail::drop_search_triggers(d_->db, &error)) {
    d_->fail_sql(QStringLiteral("prepare search"), error);
    const QString message = d_->error_string;
    close();
    d_->fail(StoreError::Sql, message);
    return false;
  }
  d_->statements = std::make_unique<detail::Statements>(d_->db);
  d_->opened_at = QDateTime::fromMSecsSinceEpoch(d_->now_ms(), Qt::UTC);
  d_->open = true;
  d_->succeed();
  emit chats_reset();
  return true;
}

void ChatStore::close() {
  const bool was_open = d_->open;
  d_->open = false;
  d_->fts = false;
  d_->statements.reset();  // queries first: they must not outlive the connection
  if (!d_->connection.isEmpty()) {
    d_->db.close();
    d_->db = QSqlDatabase();
    QSqlDatabase::removeDatabase(d_->connection);
    d_->connection.clear();
  }
  if (was_open) emit chats_reset();
}

}  // namespace quire::store
