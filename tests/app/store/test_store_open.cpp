// Files the store must refuse, byte for byte untouched, and the way out:
// setting the old file aside and starting a fresh history.

#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

#include "quire/app/store/chat_store.h"
#include "store_test_helpers.h"
#include "test_main.h"

using namespace quire::store;
using quire::store::test::RawDatabase;

namespace {

enum class Fixture {
  Garbage,
  Short,
  MagicThenJunk,
  Newer,
  NewerWal,
  OtherProgram,
  OtherApplicationId,
  DamagedPage,
};

// A history of a few pages, closed cleanly (the log folded into the file).
void make_history(const QString& path) {
  ChatStore store;
  QVERIFY(store.open(test::options(path)));
  for (int i = 0; i < 40; ++i) {
    const auto chat = store.create_chat(QStringLiteral("chat %1").arg(i));
    QVERIFY(store.append_message(*chat, Role::User, QString(300, QLatin1Char('a' + i % 26))));
  }
}

void make_fixture(Fixture fixture, const QString& path) {
  switch (fixture) {
    case Fixture::Garbage:
      test::write_bytes(path, QByteArray("This is not a database.\n").repeated(200));
      return;
    case Fixture::Short:
      test::write_bytes(path, QByteArray("SQLite"));
      return;
    case Fixture::MagicThenJunk:
      test::write_bytes(path, QByteArray("SQLite format 3\0", 16) + QByteArray(4080, '\xee'));
      return;
    case Fixture::Newer:
    case Fixture::NewerWal: {
      RawDatabase raw(path);
      raw.exec({QStringLiteral("CREATE TABLE chats (id INTEGER PRIMARY KEY, future BLOB)"),
                QStringLiteral("INSERT INTO chats (future) VALUES (x'00ff')"),
                QStringLiteral("PRAGMA application_id = %1").arg(0x51554952),
                QStringLiteral("PRAGMA user_version = %1").arg(ChatStore::schema_version() + 5)});
      if (fixture == Fixture::NewerWal) raw.exec({QStringLiteral("PRAGMA journal_mode = WAL")});
      return;
    }
    case Fixture::OtherProgram: {
      RawDatabase raw(path);
      raw.exec({QStringLiteral("CREATE TABLE moz_places (id INTEGER PRIMARY KEY, url TEXT)"),
                QStringLiteral("INSERT INTO moz_places (url) VALUES ('https://example.org')")});
      return;
    }
    case Fixture::OtherApplicationId: {
      RawDatabase raw(path);
      raw.exec({QStringLiteral("CREATE TABLE t (x)"), QStringLiteral("PRAGMA application_id = 7"),
                QStringLiteral("PRAGMA user_version = 1")});
      return;
    }
    case Fixture::DamagedPage: {
      make_history(path);
      QByteArray bytes = test::read_bytes(path);
      const int page_size = (uchar(bytes[16]) << 8) | uchar(bytes[17]);
      QVERIFY(bytes.size() >= 4 * page_size);
      // Scribble over the b-tree header of page 3.
      bytes.replace(2 * page_size, 64, QByteArray(64, '\x7f'));
      test::write_bytes(path, bytes);
      return;
    }
  }
}

}  // namespace

class StoreOpenTest : public QObject {
  Q_OBJECT

  std::unique_ptr<QTemporaryDir> dir_;
  QString path() const { return dir_->filePath(QStringLiteral("chats.sqlite")); }

 private slots:
  void init() { dir_ = std::make_unique<QTemporaryDir>(); }

  void refusedFilesAreLeftUntouched_data() {
    QTest::addColumn<Fixture>("fixture");
    QTest::addColumn<StoreError>("error");
    QTest::addColumn<QString>("says");

    QTest::newRow("text file") << Fixture::Garbage << StoreError::NotADatabase
                               << QStringLiteral("not an SQLite file");
    QTest::newRow("shorter than a header")
        << Fixture::Short << StoreError::NotADatabase << QStringLiteral("not an SQLite file");
    QTest::newRow("SQLite magic, junk header")
        << Fixture::MagicThenJunk << StoreError::NotADatabase << QStringLiteral("cannot read it");
    QTest::newRow("newer schema") << Fixture::Newer << StoreError::NewerVersion
                                  << QStringLiteral(
                                         "schema version %1; this version reads up to %2")
                                         .arg(ChatStore::schema_version() + 5)
                                         .arg(ChatStore::schema_version());
    QTest::newRow("newer schema, WAL") << Fixture::NewerWal << StoreError::NewerVersion
                                       << QStringLiteral("Update Quire to open it");
    QTest::newRow("another program's database")
        << Fixture::OtherProgram << StoreError::ForeignDatabase
        << QStringLiteral("another program");
    QTest::newRow("another application id")
        << Fixture::OtherApplicationId << StoreError::ForeignDatabase
        << QStringLiteral("another program");
    QTest::newRow("damaged page") << Fixture::DamagedPage << StoreError::Damaged
                                  << QStringLiteral("is damaged");
  }

  void refusedFilesAreLeftUntouched() {
    QFETCH(Fixture, fixture);
    QFETCH(StoreError, error);
    QFETCH(QString, says);
    make_fixture(fixture, path());
    if (QTest::currentTestFailed()) return;
    const QByteArray before = test::read_bytes(path());
    const QStringList files = test::file_names(dir_->path());
    QVERIFY(!before.isEmpty());

    ChatStore store;
    QVERIFY(!store.open(test::options(path())));
    QCOMPARE(store.error(), error);
    QVERIFY(!store.is_open());
    const QString message = store.error_string();
    QVERIFY2(message.contains(path()), qPrintable(message));
    QVERIFY2(message.contains(says), qPrintable(message));
    QVERIFY2(message.contains(QStringLiteral("has not changed it")), qPrintable(message));
    QVERIFY(!store.create_chat(QStringLiteral("must not be written")));

    // Refused again by a second attempt, and never written to.
    QVERIFY(!store.open(test::options(path())));
    store.close();
    QCOMPARE(test::read_bytes(path()), before);
    QCOMPARE(test::file_names(dir_->path()), files);
  }

  void setAsideKeepsTheOldFileAndStartsFresh() {
    make_fixture(Fixture::DamagedPage, path());
    const QByteArray damaged = test::read_bytes(path());
    // Companions of the old file must move with it, or SQLite would replay an
    // old log into the new file.
    test::write_bytes(path() + QStringLiteral("-wal"), QByteArray("old log"));
    test::write_bytes(path() + QStringLiteral("-shm"), QByteArray("old index"));

    ChatStore store;
    QVERIFY(!store.open(test::options(path())));
    QCOMPARE(store.error(), StoreError::Damaged);
    QString error;
    const QString aside = ChatStore::set_aside(path(), QStringLiteral("damaged"), &error);
    QVERIFY2(!aside.isEmpty(), qPrintable(error));
    QCOMPARE(QFileInfo(aside).absolutePath(), QFileInfo(path()).absolutePath());
    QVERIFY2(QFileInfo(aside).fileName().startsWith(QStringLiteral("chats.damaged-")),
             qPrintable(aside));
    QVERIFY(aside.endsWith(QStringLiteral(".sqlite")));
    QCOMPARE(test::read_bytes(aside), damaged);
    QCOMPARE(test::read_bytes(aside + QStringLiteral("-wal")), QByteArray("old log"));
    // The -shm index holds no data; SQLite rebuilds it when it reads the file.
    QVERIFY(QFileInfo::exists(aside + QStringLiteral("-shm")));
    QVERIFY(!QFileInfo::exists(path() + QStringLiteral("-shm")));
    QVERIFY(!QFileInfo::exists(path()));
    QVERIFY(!QFileInfo::exists(path() + QStringLiteral("-wal")));

    QVERIFY2(store.open(test::options(path())), qPrintable(store.error_string()));
    QVERIFY(store.list_chats().isEmpty());
    QVERIFY(store.create_chat(QStringLiteral("a new beginning")));

    // A second set-aside within the same second gets a distinct name.
    store.close();
    const QString again = ChatStore::set_aside(path(), QStringLiteral("damaged"), &error);
    QVERIFY(!again.isEmpty());
    QVERIFY(again != aside);
    QCOMPARE(test::read_bytes(aside), damaged);
  }

  void setAsideOfMissingFileFails() {
    QString error;
    QVERIFY(ChatStore::set_aside(path(), QStringLiteral("x"), &error).isEmpty());
    QVERIFY(error.contains(path()));
  }

  void emptyFileAndMissingFolderStartFresh() {
    test::write_bytes(path(), QByteArray());
    ChatStore store;
    QVERIFY2(store.open(test::options(path())), qPrintable(store.error_string()));
    QVERIFY(store.create_chat(QStringLiteral("in an empty file")));

    const QString nested = dir_->filePath(QStringLiteral("a/b/c/chats.sqlite"));
    QVERIFY2(store.open(test::options(nested)), qPrintable(store.error_string()));
    QVERIFY(QFileInfo::exists(nested));
    QCOMPARE(store.path(), nested);
  }

  void folderInPlaceOfFileIsRefused() {
    QVERIFY(QDir().mkpath(path()));
    ChatStore store;
    QVERIFY(!store.open(test::options(path())));
    QCOMPARE(store.error(), StoreError::CannotOpen);
    QVERIFY(store.error_string().contains(path()));
  }

  void defaultPathIsInAppData() {
    QVERIFY(ChatStore::default_path().endsWith(QStringLiteral("/chats.sqlite")));
  }
};

QUIRE_TEST(StoreOpenTest)
#include "test_store_open.moc"
