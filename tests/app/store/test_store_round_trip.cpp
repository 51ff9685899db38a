// What goes into the store comes back out, exactly, after a reopen.

#include <QJsonArray>
#include <QTemporaryDir>
#include <QTest>
#include <limits>

#include "quire/app/store/chat_store.h"
#include "quire/app/store/token_blob.h"
#include "store_test_helpers.h"
#include "test_main.h"

using namespace quire::store;
using quire::store::test::ManualTime;
using quire::store::test::RawDatabase;

using Tokens = std::vector<std::int32_t>;

class StoreRoundTripTest : public QObject {
  Q_OBJECT

  std::unique_ptr<QTemporaryDir> dir_;
  QString path() const { return dir_->filePath(QStringLiteral("chats.sqlite")); }

 private slots:
  void init() { dir_ = std::make_unique<QTemporaryDir>(); }

  void messagesSurviveReopen_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<Tokens>("tokens");

    QTest::newRow("plain") << QStringLiteral("Hello there") << Tokens{1, 394, 414, 296};
    QTest::newRow("unicode") << QStringLiteral(
                                    "Grüße 👋🏽 日本語 עברית ١٢٣ e\u0301")
                             << Tokens{0, 1, 2};
    QTest::newRow("code and newlines")
        << QStringLiteral("```cpp\nint main() {\n\treturn 0;\n}\n```\r\n  trailing  \n")
        << Tokens{};
    QTest::newRow("empty") << QString() << Tokens{};
    QTest::newRow("embedded nul") << QStringLiteral("a") + QChar(0) + QStringLiteral("b")
                                  << Tokens{7};
    QTest::newRow("extreme ids") << QStringLiteral("x")
                                 << Tokens{-1, std::numeric_limits<std::int32_t>::min(),
                                           std::numeric_limits<std::int32_t>::max(), 0};
    Tokens many(100000);
    for (std::size_t i = 0; i < many.size(); ++i)
      many[i] = static_cast<std::int32_t>(i * 7919);
    QTest::newRow("long") << QString(200000, QLatin1Char('z')) << many;
  }

  void messagesSurviveReopen() {
    QFETCH(QString, text);
    QFETCH(Tokens, tokens);
    ManualTime time;
    const ModelUse model{QStringLiteral("/models/Llama-3-8B-exl2"),
                         QJsonObject{{QStringLiteral("temperature"), 0.7},
                                     {QStringLiteral("cache"), QStringLiteral("q4")},
                                     {QStringLiteral("stop"), QJsonArray{QStringLiteral("</s>")}}}};
    GenerationStats stats;
    stats.prompt_tokens = 1200;
    stats.cached_tokens = 1024;
    stats.computed_tokens = 176;
    stats.generated_tokens = 42;
    stats.time_to_first_token_ms = 83.25;
    stats.tokens_per_second = 211.5;
    stats.stop_reason = QStringLiteral("eos");
    stats.model = QStringLiteral("Llama-3-8B-exl2");

    QList<Message> written;
    ChatSummary summary;
    {
      ChatStore store;
      QVERIFY2(store.open(test::options(path(), &time)), qPrintable(store.error_string()));
      const auto chat = store.create_chat(text, model);
      QVERIFY2(chat, qPrintable(store.error_string()));
      time.advance_ms(1500);
      QVERIFY2(store.append_message(*chat, Role::System, QStringLiteral("Be brief.")),
               qPrintable(store.error_string()));
      time.advance_ms(10);
      QVERIFY(store.append_message(*chat, Role::User, text, tokens));
      time.advance_ms(10);
      const auto reply = store.begin_reply(*chat, stats.model);
      QVERIFY(reply);
      time.advance_ms(10);
      QVERIFY(store.write_reply(*reply, text, tokens, stats));
      written = store.messages(*chat);
      summary = *store.chat(*chat);
    }
    ChatStore store;
    QVERIFY2(store.open(test::options(path())), qPrintable(store.error_string()));
    const QList<ChatSummary> chats = store.list_chats();
    QCOMPARE(chats.size(), 1);
    QCOMPARE(chats.first(), summary);
    QCOMPARE(chats.first().title, text);
    QCOMPARE(chats.first().model, model);
    QCOMPARE(chats.first().message_count, 3);
    QCOMPARE(chats.first().created, time.now().addMSecs(-1530));
    QCOMPARE(chats.first().updated, time.now());

    const QList<Message> read = store.messages(chats.first().id);
    QCOMPARE(read, written);
    QCOMPARE(read.size(), 3);
    for (int i = 0; i < read.size(); ++i)
      QCOMPARE(read[i].position, i);
    QCOMPARE(read[0].role, Role::System);
    QVERIFY(read[0].tokens.empty());
    QVERIFY(!read[0].stats);
    QCOMPARE(read[1].role, Role::User);
    QCOMPARE(read[1].text, text);
    QCOMPARE(read[1].tokens, tokens);
    QCOMPARE(read[2].role, Role::Assistant);
    QCOMPARE(read[2].text, text);
    QCOMPARE(read[2].tokens, tokens);
    QCOMPARE(read[2].stats, std::optional<GenerationStats>(stats));
    QCOMPARE(read[2].created, time.now().addMSecs(-10));
    QCOMPARE(read[2].updated, time.now());
    QCOMPARE(store.message(read[1].id)->text, text);
  }

  void tokenBlobIsLittleEndianInt32() {
    const Tokens tokens{1, -2, 0x01020304};
    const QByteArray expected = QByteArray::fromHex("01000000feffffff04030201");
    QCOMPARE(encode_tokens(tokens), expected);
    QCOMPARE(decode_tokens(expected), std::optional<Tokens>(tokens));
    QCOMPARE(decode_tokens(QByteArray()), std::optional<Tokens>(Tokens{}));
    QVERIFY(!decode_tokens(QByteArray("\x01\x02\x03", 3)));

    // And that is what the column holds, for any tool that reads the file.
    {
      ChatStore store;
      QVERIFY(store.open(test::options(path())));
      const auto chat = store.create_chat(QStringLiteral("blob"));
      QVERIFY(store.append_message(*chat, Role::User, QStringLiteral("t"), tokens));
      QVERIFY(store.append_message(*chat, Role::User, QStringLiteral("no tokens")));
    }
    RawDatabase raw(path());
    QCOMPARE(
        raw.value(QStringLiteral("SELECT tokens FROM messages WHERE position = 0")).toByteArray(),
        expected);
    QVERIFY(raw.value(QStringLiteral("SELECT tokens IS NULL FROM messages WHERE position = 1"))
                .toBool());
  }

  void fileIsWalVersionedAndOurs() {
    {
      ChatStore store;
      QVERIFY(store.open(test::options(path())));
      QCOMPARE(store.path(), path());
      RawDatabase raw(path());
      QCOMPARE(raw.value(QStringLiteral("PRAGMA journal_mode")).toString(), QStringLiteral("wal"));
      QCOMPARE(raw.value(QStringLiteral("PRAGMA user_version")).toInt(),
               ChatStore::schema_version());
      QCOMPARE(raw.value(QStringLiteral("PRAGMA application_id")).toLongLong(), 0x51554952);
    }
    // Foreign keys are enforced by the store's connection: a purge takes the
    // chat's messages with it.
    ManualTime time;
    ChatStore store;
    QVERIFY(store.open(test::options(path(), &time)));
    const auto chat = store.create_chat(QStringLiteral("gone"));
    QVERIFY(store.append_message(*chat, Role::User, QStringLiteral("m")));
    QVERIFY(store.delete_chat(*chat));
    time.advance_ms(1);
    QCOMPARE(store.purge_deleted(time.now()), 1);
    RawDatabase raw(path());
    QCOMPARE(raw.value(QStringLiteral("SELECT COUNT(*) FROM messages")).toInt(), 0);
  }

  void listFollowsLastActivity() {
    ManualTime time;
    ChatStore store;
    QVERIFY(store.open(test::options(path(), &time)));
    const auto a = store.create_chat(QStringLiteral("a"));
    time.advance_ms(1000);
    const auto b = store.create_chat(QStringLiteral("b"));
    const auto c = store.create_chat(QStringLiteral("c"));  // same time as b: newer id first
    const auto order = [&] {
      QList<ChatId> ids;
      for (const ChatSummary& chat : store.list_chats())
        ids << chat.id;
      return ids;
    };
    QCOMPARE(order(), (QList<ChatId>{*c, *b, *a}));
    time.advance_ms(1000);
    QVERIFY(store.append_message(*a, Role::User, QStringLiteral("hi")));
    QCOMPARE(order(), (QList<ChatId>{*a, *c, *b}));
    time.advance_ms(1000);
    QVERIFY(store.rename_chat(*b, QStringLiteral("renamed")));  // not activity
    QCOMPARE(order(), (QList<ChatId>{*a, *c, *b}));
    QCOMPARE(store.chat(*b)->title, QStringLiteral("renamed"));
  }

  void missingThingsAreReported() {
    ChatStore store;
    QVERIFY(!store.create_chat(QStringLiteral("closed")));
    QCOMPARE(store.error(), StoreError::NotOpen);
    QVERIFY(store.open(test::options(path())));
    QVERIFY(!store.append_message(ChatId{99}, Role::User, QStringLiteral("x")));
    QCOMPARE(store.error(), StoreError::NotFound);
    QVERIFY(!store.message(MessageId{5}));
    QCOMPARE(store.error(), StoreError::NotFound);
    QVERIFY(!store.rename_chat(ChatId{99}, QStringLiteral("x")));
    QCOMPARE(store.error(), StoreError::NotFound);
    QVERIFY(!store.truncate_after(MessageId{5}));
    QCOMPARE(store.error(), StoreError::NotFound);
    QVERIFY(store.list_chats().isEmpty());
    QCOMPARE(store.error(), StoreError::None);
  }
};

QUIRE_TEST(StoreRoundTripTest)
#include "test_store_round_trip.moc"
