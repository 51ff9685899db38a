// Upgrading a version-1 or version-2 history, written here by hand as that
// version wrote it, keeps every chat and message (version 2's chats become
// single branches); a failed upgrade leaves the file as it was.

#include <QFileInfo>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTest>

#include "quire/app/store/chat_store.h"
#include "store_test_helpers.h"
#include "test_main.h"

using namespace quire::store;
using quire::store::test::RawDatabase;

namespace {

// The version-1 layout and some history in it: ISO-8601 text timestamps, no
// token ids, no statistics.
const QStringList kVersion1Fixture = {
    QStringLiteral("CREATE TABLE chats (id INTEGER PRIMARY KEY AUTOINCREMENT,"
                   " title TEXT NOT NULL, created TEXT NOT NULL, updated TEXT NOT NULL)"),
    QStringLiteral("CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT,"
                   " chat_id INTEGER NOT NULL REFERENCES chats(id) ON DELETE CASCADE,"
                   " position INTEGER NOT NULL, role TEXT NOT NULL, text TEXT NOT NULL,"
                   " created TEXT NOT NULL)"),
    QStringLiteral("CREATE INDEX messages_by_chat ON messages(chat_id, position)"),
    QStringLiteral("INSERT INTO chats VALUES (3, 'Rust lifetimes', '2023-11-02 09:15:00',"
                   " '2023-11-02 09:20:30')"),
    QStringLiteral("INSERT INTO chats VALUES (8, 'Überraschung 🎉', '2024-01-15T18:00:00',"
                   " '2024-01-15T18:05:00')"),
    QStringLiteral("INSERT INTO messages VALUES (10, 3, 0, 'system', 'You are terse.',"
                   " '2023-11-02 09:15:00')"),
    QStringLiteral("INSERT INTO messages VALUES (11, 3, 1, 'user', 'What is ''a?',"
                   " '2023-11-02 09:15:05')"),
    QStringLiteral("INSERT INTO messages VALUES (12, 3, 2, 'assistant',"
                   " 'A lifetime parameter.\n```rust\nfn f<''a>(x: &''a str) {}\n```',"
                   " '2023-11-02 09:20:30')"),
    QStringLiteral("INSERT INTO messages VALUES (20, 8, 0, 'user', 'Grüß Gott', 'not a date')"),
    QStringLiteral("PRAGMA application_id = %1").arg(0x51554952),
    QStringLiteral("PRAGMA user_version = 1"),
};

// The version-2 layout (as its migration left it) and some history in it:
// flat chats with positions, token ids and statistics, a deleted chat.
const QStringList kVersion2Fixture = {
    QStringLiteral("CREATE TABLE chats (id INTEGER PRIMARY KEY AUTOINCREMENT,"
                   " title TEXT NOT NULL DEFAULT '', created INTEGER NOT NULL,"
                   " updated INTEGER NOT NULL, model_dir TEXT NOT NULL DEFAULT '',"
                   " settings TEXT NOT NULL DEFAULT '{}', deleted_at INTEGER)"),
    QStringLiteral("CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT,"
                   " chat_id INTEGER NOT NULL REFERENCES chats(id) ON DELETE CASCADE,"
                   " position INTEGER NOT NULL,"
                   " role TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant')),"
                   " text TEXT NOT NULL DEFAULT '', tokens BLOB, created INTEGER NOT NULL,"
                   " updated INTEGER NOT NULL, stats TEXT, UNIQUE (chat_id, position))"),
    QStringLiteral("CREATE INDEX chats_by_activity ON chats(updated DESC, id DESC)"
                   " WHERE deleted_at IS NULL"),
    QStringLiteral("CREATE INDEX chats_deleted ON chats(deleted_at) WHERE deleted_at IS NOT NULL"),
    QStringLiteral("INSERT INTO chats VALUES (4, 'Plans', 1714564800000, 1714564900000,"
                   " '/models/tiny', '{\"temperature\":0.5}', NULL)"),
    QStringLiteral("INSERT INTO chats VALUES (6, 'Binned', 1714564800000, 1714564800000, '',"
                   " '{}', 1714564850000)"),
    QStringLiteral("INSERT INTO chats VALUES (7, 'Empty', 1714564800000, 1714564800000, '',"
                   " '{}', NULL)"),
    QStringLiteral("INSERT INTO messages VALUES (40, 4, 0, 'system', 'Be brief.', NULL,"
                   " 1714564800000, 1714564800000, NULL)"),
    // Token ids 1 and 300 as little-endian int32.
    QStringLiteral("INSERT INTO messages VALUES (41, 4, 1, 'user', 'Lunch?',"
                   " X'010000002C010000', 1714564810000, 1714564810000, NULL)"),
    // A gap in the positions (not written by version 2, but harmless).
    QStringLiteral("INSERT INTO messages VALUES (45, 4, 3, 'assistant', 'Soup.', NULL,"
                   " 1714564820000, 1714564830000,"
                   " '{\"stop_reason\":\"eos\",\"generated_tokens\":2}')"),
    QStringLiteral("INSERT INTO messages VALUES (60, 6, 0, 'user', 'gone', NULL,"
                   " 1714564800000, 1714564800000, NULL)"),
    QStringLiteral("PRAGMA application_id = %1").arg(0x51554952),
    QStringLiteral("PRAGMA user_version = 2"),
};

QDateTime utc(const char* iso) {
  return QDateTime::fromString(QLatin1String(iso), Qt::ISODate).toUTC();
}

// The schema as SQLite reports it, without the search index (derived data).
QStringList schema_of(const QString& path) {
  RawDatabase raw(path);
  QSqlQuery query(raw.db());
  query.exec(
      QStringLiteral("SELECT type, name, sql FROM sqlite_master"
                     " WHERE name NOT LIKE '%search%' ORDER BY type, name"));
  QStringList rows;
  while (query.next()) {
    rows << QStringLiteral("%1 %2: %3")
                .arg(query.value(0).toString(), query.value(1).toString(),
                     query.value(2).toString().simplified());
  }
  return rows;
}

}  // namespace

class StoreMigrationTest : public QObject {
  Q_OBJECT

  std::unique_ptr<QTemporaryDir> dir_;
  QString path() const { return dir_->filePath(QStringLiteral("chats.sqlite")); }

  void write_version1(const QStringList& extra = {}) {
    RawDatabase raw(path());
    raw.exec(kVersion1Fixture + extra);
  }

 private slots:
  void init() { dir_ = std::make_unique<QTemporaryDir>(); }

  void version1IsUpgradedKeepingEverything() {
    write_version1();
    ChatStore store;
    QVERIFY2(store.open(test::options(path())), qPrintable(store.error_string()));

    const QList<ChatSummary> chats = store.list_chats();
    QCOMPARE(chats.size(), 2);
    QCOMPARE(chats[0].id, ChatId{8});
    QCOMPARE(chats[0].title, QStringLiteral("Überraschung 🎉"));
    QCOMPARE(chats[0].created, utc("2024-01-15T18:00:00Z"));
    QCOMPARE(chats[0].updated, utc("2024-01-15T18:05:00Z"));
    QCOMPARE(chats[0].message_count, 1);
    QCOMPARE(chats[1].id, ChatId{3});
    QCOMPARE(chats[1].title, QStringLiteral("Rust lifetimes"));
    QCOMPARE(chats[1].created, utc("2023-11-02T09:15:00Z"));
    QCOMPARE(chats[1].model, ModelUse{});
    QVERIFY(!chats[1].deleted);

    const QList<Message> messages = store.messages(ChatId{3});
    QCOMPARE(messages.size(), 3);
    QCOMPARE(messages[0].id, MessageId{10});
    QCOMPARE(messages[0].role, Role::System);
    QCOMPARE(messages[1].role, Role::User);
    QCOMPARE(messages[1].text, QStringLiteral("What is 'a?"));
    QCOMPARE(messages[1].created, utc("2023-11-02T09:15:05Z"));
    QCOMPARE(messages[1].updated, messages[1].created);
    QCOMPARE(messages[2].role, Role::Assistant);
    QVERIFY(messages[2].text.contains(QStringLiteral("fn f<'a>(x: &'a str) {}\n```")));
    QVERIFY(messages[2].tokens.empty());
    QVERIFY(!messages[2].stats);
    // A timestamp version 1 could not parse becomes the epoch, not a lost message.
    QCOMPARE(store.messages(ChatId{8}).first().created, QDateTime::fromMSecsSinceEpoch(0, Qt::UTC));

    // The upgraded file works like a new one: positions continue, ids are not
    // reused, search finds old text.
    const auto added = store.append_message(ChatId{3}, Role::User, QStringLiteral("Thanks"));
    QVERIFY(added);
    QVERIFY(raw(*added) > 20);
    QCOMPARE(store.message(*added)->position, 3);
    QCOMPARE(store.search(QStringLiteral("lifetime parameter")).size(), 1);
    QCOMPARE(store.search(QStringLiteral("grüß")).size(), 1);
    store.close();

    {
      RawDatabase raw(path());
      QCOMPARE(raw.value(QStringLiteral("PRAGMA user_version")).toInt(),
               ChatStore::schema_version());
    }
    // The copy kept from before the upgrade is the version-1 file.
    const QString backup =
        dir_->filePath(QStringLiteral("chats.before-v%1.sqlite").arg(ChatStore::schema_version()));
    QVERIFY(QFileInfo::exists(backup));
    RawDatabase copy(backup);
    QCOMPARE(copy.value(QStringLiteral("PRAGMA user_version")).toInt(), 1);
    QCOMPARE(copy.value(QStringLiteral("SELECT COUNT(*) FROM messages")).toInt(), 4);
  }

  void version2ChatsBecomeSingleBranches() {
    {
      RawDatabase raw(path());
      QVERIFY(raw.exec(kVersion2Fixture));
    }
    ChatStore store;
    QVERIFY2(store.open(test::options(path())), qPrintable(store.error_string()));

    const QList<Message> messages = store.current_path(ChatId{4});
    const auto& path = messages;
    QCOMPARE(path.size(), 3);
    QCOMPARE(path[0].id, MessageId{40});
    QCOMPARE(path[0].parent, std::nullopt);
    QCOMPARE(path[1].id, MessageId{41});
    QCOMPARE(path[1].parent, std::optional<MessageId>(MessageId{40}));
    QCOMPARE(path[1].tokens, (std::vector<std::int32_t>{1, 300}));
    QCOMPARE(path[2].id, MessageId{45});
    QCOMPARE(path[2].parent, std::optional<MessageId>(MessageId{41}));
    QCOMPARE(path[2].position, 2);
    QCOMPARE(path[2].text, QStringLiteral("Soup."));
    QCOMPARE(path[2].stats->stop_reason, QStringLiteral("eos"));
    QCOMPARE(path[2].stats->generated_tokens, 2);
    QCOMPARE(path[2].updated, QDateTime::fromMSecsSinceEpoch(1714564830000, Qt::UTC));
    QCOMPARE(store.message_tree(ChatId{4}), path);
    QCOMPARE(store.siblings(MessageId{45}), std::optional<Siblings>(Siblings{{MessageId{45}}, 0}));
    QVERIFY(store.current_path(ChatId{7}).isEmpty());

    // Chats keep what they had and override no setting.
    const ChatSummary plans = *store.chat(ChatId{4});
    QCOMPARE(plans.model.model_dir, QStringLiteral("/models/tiny"));
    QCOMPARE(plans.model.settings.value(QStringLiteral("temperature")).toDouble(), 0.5);
    QCOMPARE(plans.message_count, 3);
    QCOMPARE(store.chat_settings(ChatId{4}), std::optional<ChatSettings>(ChatSettings{}));
    QCOMPARE(store.deleted_chats().size(), 1);
    QCOMPARE(store.messages(ChatId{6}).size(), 1);

    // The upgraded chat branches like a new one; ids are not reused.
    const auto regenerated = store.begin_reply_after(MessageId{41}, QString());
    QVERIFY(regenerated);
    QVERIFY(raw(*regenerated) > 60);
    QCOMPARE(store.siblings(*regenerated),
             std::optional<Siblings>(Siblings{{MessageId{45}, *regenerated}, 1}));
    QVERIFY(store.select_message(MessageId{45}));
    QCOMPARE(store.current_path(ChatId{4}).last().id, MessageId{45});
    QCOMPARE(store.search(QStringLiteral("Lunch")).size(), 1);
    store.close();

    RawDatabase raw(this->path());
    QCOMPARE(raw.value(QStringLiteral("PRAGMA user_version")).toInt(), ChatStore::schema_version());
    QCOMPARE(raw.value(QStringLiteral("SELECT COUNT(*) FROM pragma_foreign_key_check")).toInt(), 0);
    // The parent reference follows the rebuilt table's rename.
    const QString table =
        raw.value(QStringLiteral("SELECT sql FROM sqlite_master WHERE name = 'messages'"))
            .toString();
    QVERIFY2(!table.contains(QStringLiteral("messages_v")), qPrintable(table));
    const QString backup =
        dir_->filePath(QStringLiteral("chats.before-v%1.sqlite").arg(ChatStore::schema_version()));
    RawDatabase copy(backup);
    QCOMPARE(copy.value(QStringLiteral("PRAGMA user_version")).toInt(), 2);
  }

  void upgradedAndNewFilesHaveTheSameSchema() {
    write_version1();
    {
      ChatStore store;
      QVERIFY(store.open(test::options(path())));
    }
    const QString fresh = dir_->filePath(QStringLiteral("fresh.sqlite"));
    {
      ChatStore store;
      QVERIFY(store.open(test::options(fresh)));
    }
    const QStringList upgraded = schema_of(path());
    QVERIFY(!upgraded.isEmpty());
    QCOMPARE(upgraded, schema_of(fresh));
  }

  void failedUpgradeLeavesTheFileAsItWas() {
    // Version 1 did not check roles; version 2 does and refuses to guess.
    write_version1(
        {QStringLiteral("INSERT INTO messages VALUES (30, 8, 1, 'narrator', 'Meanwhile',"
                        " '2024-01-15T18:06:00')")});
    const QByteArray before = test::read_bytes(path());
    ChatStore store;
    QVERIFY(!store.open(test::options(path())));
    QCOMPARE(store.error(), StoreError::MigrationFailed);
    const QString message = store.error_string();
    QVERIFY2(message.contains(path()), qPrintable(message));
    QVERIFY2(message.contains(QStringLiteral("the file is at version 1")), qPrintable(message));
    QVERIFY2(message.contains(QStringLiteral("before-v%1").arg(ChatStore::schema_version())),
             qPrintable(message));
    QCOMPARE(test::read_bytes(path()), before);
  }

  void backupCanBeSwitchedOff() {
    write_version1();
    StoreOptions options = test::options(path());
    options.backup_before_migration = false;
    ChatStore store;
    QVERIFY(store.open(options));
    QCOMPARE(test::file_names(dir_->path()).filter(QStringLiteral("before")), QStringList());
  }
};

QUIRE_TEST(StoreMigrationTest)
#include "test_store_migration.moc"
