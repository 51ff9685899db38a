// Delete with undo and purge, edit and truncate, and search (with the FTS5
// index and with the LIKE fallback).

#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "quire/app/store/chat_store.h"
#include "store_test_helpers.h"
#include "test_main.h"

using namespace quire::store;
using quire::store::test::ManualTime;
using quire::store::test::RawDatabase;

class ChatOperationsTest : public QObject {
  Q_OBJECT

  std::unique_ptr<QTemporaryDir> dir_;
  QString path() const { return dir_->filePath(QStringLiteral("chats.sqlite")); }

  static QStringList titles(const QList<SearchHit>& hits) {
    QStringList out;
    for (const SearchHit& hit : hits)
      out << hit.chat.title;
    return out;
  }

  // FTS5's own consistency check of the search index against the tables.
  void check_search_index() {
    RawDatabase raw(path());
    QVERIFY(raw.exec({QStringLiteral("INSERT INTO message_search(message_search, rank)"
                                     " VALUES ('integrity-check', 1)"),
                      QStringLiteral("INSERT INTO chat_search(chat_search, rank)"
                                     " VALUES ('integrity-check', 1)")}));
  }

 private slots:
  void init() { dir_ = std::make_unique<QTemporaryDir>(); }

  void deleteCanBeUndoneUntilPurged() {
    ManualTime time;
    ChatStore store;
    QVERIFY(store.open(test::options(path(), &time)));
    QSignalSpy removed(&store, &ChatStore::chat_removed);
    QSignalSpy added(&store, &ChatStore::chat_added);
    const auto keep = store.create_chat(QStringLiteral("keep"));
    const auto drop = store.create_chat(QStringLiteral("drop"));
    QVERIFY(store.append_message(*drop, Role::User, QStringLiteral("a unique needle")));
    QCOMPARE(added.size(), 2);

    time.advance_ms(1000);
    QVERIFY(store.delete_chat(*drop));
    QCOMPARE(removed.size(), 1);
    QCOMPARE(removed.first().first().value<ChatId>(), *drop);
    QCOMPARE(store.list_chats().size(), 1);
    QCOMPARE(store.deleted_chats().size(), 1);
    QCOMPARE(store.deleted_chats().first().deleted, std::optional<QDateTime>(time.now()));
    QVERIFY(store.search(QStringLiteral("needle")).isEmpty());
    QVERIFY(!store.append_message(*drop, Role::User, QStringLiteral("into the bin")));
    QVERIFY(!store.delete_chat(*drop));  // already deleted
    QCOMPARE(store.error(), StoreError::NotFound);

    QVERIFY(store.restore_chat(*drop));
    QCOMPARE(added.size(), 3);
    QCOMPARE(store.list_chats().size(), 2);
    QCOMPARE(store.messages(*drop).size(), 1);
    QCOMPARE(titles(store.search(QStringLiteral("needle"))), QStringList{QStringLiteral("drop")});
    QVERIFY(!store.restore_chat(*keep));  // not deleted

    // Deleted in this session: purge_previous_sessions() keeps it (undo works
    // until the application quits); the next session purges it.
    QVERIFY(store.delete_chat(*drop));
    time.advance_ms(1000);
    QCOMPARE(store.purge_previous_sessions(), 0);
    store.close();
    QVERIFY(store.open(test::options(path(), &time)));
    QCOMPARE(store.deleted_chats().size(), 1);
    time.advance_ms(1000);
    QCOMPARE(store.purge_previous_sessions(), 1);
    QVERIFY(store.deleted_chats().isEmpty());
    QVERIFY(!store.restore_chat(*drop));
    QVERIFY(!store.chat(*drop));
    QCOMPARE(store.list_chats().size(), 1);
    store.close();
    check_search_index();
  }

  void truncateAfterAndEditAndResend() {
    ChatStore store;
    QVERIFY(store.open(test::options(path())));
    const auto chat = store.create_chat(QStringLiteral("edits"));
    QList<MessageId> ids;
    for (const char* text : {"q1", "a1", "q2", "a2"}) {
      const Role role = text[0] == 'q' ? Role::User : Role::Assistant;
      ids << *store.append_message(*chat, role, QString::fromLatin1(text),
                                   std::vector<std::int32_t>{1, 2});
    }
    QSignalSpy changed(&store, &ChatStore::chat_changed);

    QVERIFY(store.truncate_after(ids[2]));
    QCOMPARE(changed.size(), 1);
    QList<Message> messages = store.messages(*chat);
    QCOMPARE(messages.size(), 3);
    QCOMPARE(messages.last().id, ids[2]);

    // Edit the first question and resend: later messages go, the edited
    // message's token ids are stale and cleared.
    QVERIFY(store.edit_message(ids[0], QStringLiteral("q1, better"), ChatStore::Following::Drop));
    messages = store.messages(*chat);
    QCOMPARE(messages.size(), 1);
    QCOMPARE(messages[0].text, QStringLiteral("q1, better"));
    QVERIFY(messages[0].tokens.empty());
    const auto reply = store.begin_reply(*chat, QString());
    QCOMPARE(store.message(*reply)->position, 1);

    // A plain edit keeps what follows.
    QVERIFY(store.set_message_tokens(ids[0], std::vector<std::int32_t>{9}));
    QVERIFY(store.edit_message(ids[0], QStringLiteral("q1, best")));
    QCOMPARE(store.messages(*chat).size(), 2);
    QVERIFY(store.message(ids[0])->tokens.empty());
    QVERIFY(!store.edit_message(ids[3], QStringLiteral("gone")));
    QCOMPARE(store.error(), StoreError::NotFound);
    store.close();
    check_search_index();
  }

  void search_data() {
    QTest::addColumn<bool>("full_text");
    QTest::addColumn<QString>("query");
    QTest::addColumn<QStringList>("expected");

    for (const bool full_text : {true, false}) {
      const char* mode = full_text ? "fts5" : "like";
      const auto row = [&](const char* name, const QString& query, const QStringList& expected) {
        QTest::addRow("%s: %s", mode, name) << full_text << query << expected;
      };
      row("title", QStringLiteral("quantum"), {QStringLiteral("Quantum notes")});
      row("message text, other case", QStringLiteral("ENTANGLEMENT"),
          {QStringLiteral("Quantum notes")});
      row("several chats, most recent first", QStringLiteral("python"),
          {QStringLiteral("Snakes"), QStringLiteral("Scripts")});
      row("substring inside a word", QStringLiteral("ytho"),
          {QStringLiteral("Snakes"), QStringLiteral("Scripts")});
      row("two characters", QStringLiteral("Qu"), {QStringLiteral("Quantum notes")});
      row("wildcards are literal", QStringLiteral("100%"), {QStringLiteral("Scripts")});
      row("underscore is literal", QStringLiteral("a_b"), {});
      row("quotes are literal", QStringLiteral("say \"hi\""), {QStringLiteral("Snakes")});
      row("nothing", QStringLiteral("zebra"), {});
      row("blank", QStringLiteral("   "), {});
      if (full_text) {
        // FTS5 folds case beyond ASCII; LIKE does not.
        row("unicode case", QStringLiteral("MÜNCHEN"), {QStringLiteral("Reise")});
      }
    }
  }

  void search() {
    QFETCH(bool, full_text);
    QFETCH(QString, query);
    QFETCH(QStringList, expected);
    ManualTime time;
    StoreOptions options = test::options(path(), &time);
    options.full_text_search = full_text;
    ChatStore store;
    QVERIFY(store.open(options));
    QCOMPARE(store.full_text_search(), full_text);
    const auto add = [&](const QString& title, const QStringList& texts) {
      time.advance_ms(1000);
      const auto chat = store.create_chat(title);
      for (const QString& text : texts)
        store.append_message(*chat, Role::User, text);
      return *chat;
    };
    add(QStringLiteral("Quantum notes"), {QStringLiteral("On entanglement and decoherence.")});
    add(QStringLiteral("Scripts"), {QStringLiteral("Python is 100% fine"), QStringLiteral("axb")});
    add(QStringLiteral("Reise"), {QStringLiteral("Wir fahren nach München.")});
    add(QStringLiteral("Snakes"), {QStringLiteral("A python can say \"hi\"? No.")});
    const auto hidden = add(QStringLiteral("Deleted python chat"), {QStringLiteral("python")});
    QVERIFY(store.delete_chat(hidden));

    const QList<SearchHit> hits = store.search(query);
    QCOMPARE(store.error(), StoreError::None);
    QCOMPARE(titles(hits), expected);
    for (const SearchHit& hit : hits) {
      if (hit.title_matches) continue;
      QVERIFY(hit.message);
      QVERIFY2(hit.snippet.contains(query, Qt::CaseInsensitive) || full_text,
               qPrintable(hit.snippet));
      QCOMPARE(store.message(*hit.message)->chat, hit.chat.id);
    }
  }

  void searchIndexFollowsTheFallbackAndBack() {
    {
      ChatStore store;
      QVERIFY(store.open(test::options(path())));
      QVERIFY(store.full_text_search());
      QVERIFY(store.append_message(*store.create_chat(QStringLiteral("one")), Role::User,
                                   QStringLiteral("written with the index")));
    }
    {
      // As on a system whose SQLite lacks FTS5: the triggers go, writes work.
      StoreOptions options = test::options(path());
      options.full_text_search = false;
      ChatStore store;
      QVERIFY(store.open(options));
      QVERIFY(!store.full_text_search());
      QVERIFY(store.append_message(*store.create_chat(QStringLiteral("two")), Role::User,
                                   QStringLiteral("written without the index")));
      QCOMPARE(store.search(QStringLiteral("without the index")).size(), 1);
    }
    ChatStore store;
    QVERIFY(store.open(test::options(path())));
    QVERIFY(store.full_text_search());
    // The index was rebuilt and knows the message written without it.
    QCOMPARE(titles(store.search(QStringLiteral("without the index"))),
             QStringList{QStringLiteral("two")});
    QCOMPARE(store.search(QStringLiteral("written")).size(), 2);
    store.close();
    check_search_index();
  }

  void snippetShowsTheMatchInContext() {
    ChatStore store;
    QVERIFY(store.open(test::options(path())));
    const QString text = QString(100, QLatin1Char('x')) + QStringLiteral(" the needle here ") +
                         QString(100, QLatin1Char('y'));
    QVERIFY(store.append_message(*store.create_chat(QStringLiteral("t")), Role::User, text));
    const QList<SearchHit> hits = store.search(QStringLiteral("NEEDLE"));
    QCOMPARE(hits.size(), 1);
    QVERIFY(!hits[0].title_matches);
    QVERIFY(hits[0].snippet.startsWith(QStringLiteral("…")));
    QVERIFY(hits[0].snippet.endsWith(QStringLiteral("…")));
    QVERIFY(hits[0].snippet.contains(QStringLiteral("the needle here")));
    QVERIFY(hits[0].snippet.size() < 120);
  }
};

QUIRE_TEST(ChatOperationsTest)
#include "test_chat_operations.moc"
