// Export to JSON and back, refusing bad files clearly; Markdown, exactly.

#include <QTemporaryDir>
#include <QTest>

#include "quire/app/store/chat_export.h"
#include "quire/app/store/chat_store.h"
#include "store_test_helpers.h"
#include "test_main.h"

using namespace quire::store;

namespace {

QDateTime utc_ms(qint64 ms) {
  return QDateTime::fromMSecsSinceEpoch(ms, Qt::UTC);
}

Message make_message(Role role, const QString& text, std::vector<std::int32_t> tokens = {},
                     std::optional<GenerationStats> stats = std::nullopt) {
  Message message;
  message.role = role;
  message.text = text;
  message.tokens = std::move(tokens);
  message.created = utc_ms(1714564800123);
  message.updated = utc_ms(1714564801456);
  message.stats = std::move(stats);
  return message;
}

ChatDocument sample() {
  GenerationStats stats;
  stats.prompt_tokens = 30;
  stats.cached_tokens = 16;
  stats.computed_tokens = 14;
  stats.generated_tokens = 9;
  stats.time_to_first_token_ms = 12.5;
  stats.tokens_per_second = 98.25;
  stats.stop_reason = QStringLiteral("eos");
  stats.model = QStringLiteral("tiny");
  ChatDocument document;
  document.title = QStringLiteral("Sorting in C++ — «quick»");
  document.created = utc_ms(1714564800000);
  document.updated = utc_ms(1714564801456);
  document.model = {QStringLiteral("/models/tiny"), {{QStringLiteral("temperature"), 0.5}}};
  document.messages = {
      make_message(Role::System, QStringLiteral("You write code.")),
      make_message(Role::User, QStringLiteral("Sort a vector?"), {1, 394, -5}),
      make_message(
          Role::Assistant,
          QStringLiteral("Use std::sort:\n\n```cpp\nstd::sort(v.begin(), v.end());\n```\n"),
          {2147483647, -2147483647 - 1}, stats),
  };
  for (int i = 0; i < document.messages.size(); ++i)
    document.messages[i].position = i;
  return document;
}

// The parts of a one-branch document that survive a trip through a store
// (ids are new).
ChatDocument without_ids(ChatDocument document) {
  for (int i = 0; i < document.messages.size(); ++i) {
    document.messages[i].id = MessageId{};
    document.messages[i].chat = ChatId{};
    document.messages[i].parent.reset();
    document.messages[i].position = i;
  }
  document.current.reset();
  return document;
}

}  // namespace

class ChatExportTest : public QObject {
  Q_OBJECT

  std::unique_ptr<QTemporaryDir> dir_;

 private slots:
  void init() { dir_ = std::make_unique<QTemporaryDir>(); }

  void jsonRoundTrip() {
    const ChatDocument document = sample();
    const QByteArray json = chat_to_json(document);
    QVERIFY(json.contains("\"format\": \"quire-chat\""));
    QVERIFY(json.contains("\"version\": 2"));
    QString error;
    const auto read = chat_from_json(json, &error);
    QVERIFY2(read, qPrintable(error));
    QCOMPARE(*read, document);
  }

  void exportedChatImportsAsANewChat() {
    ChatStore store;
    QVERIFY(store.open(test::options(dir_->filePath(QStringLiteral("chats.sqlite")))));
    const auto original = store.insert_document(sample());
    QVERIFY(original);
    const QString file = dir_->filePath(QStringLiteral("chat.json"));
    QString error;
    QVERIFY2(export_chat_json(store, *original, file, &error), qPrintable(error));
    const auto imported = import_chat_json(store, file, &error);
    QVERIFY2(imported, qPrintable(error));
    QVERIFY(*imported != *original);
    // Beside the original it needs a title of its own; the rest is the same.
    ChatDocument expected = sample();
    expected.title = QStringLiteral("Sorting in C++ — «quick» (imported)");
    QCOMPARE(without_ids(*store.document(*imported)), expected);
    QCOMPARE(store.list_chats().size(), 2);

    const auto again = import_chat_json(store, file, &error);
    QVERIFY2(again, qPrintable(error));
    QCOMPARE(store.chat(*again)->title, QStringLiteral("Sorting in C++ — «quick» (imported 2)"));

    // Alone in the history, a chat keeps its title.
    ChatStore other;
    QVERIFY(other.open(test::options(dir_->filePath(QStringLiteral("other.sqlite")))));
    const auto alone = import_chat_json(other, file, &error);
    QVERIFY2(alone, qPrintable(error));
    QCOMPARE(without_ids(*other.document(*alone)), sample());
  }

  void exportFileNamesComeFromTheTitle_data() {
    QTest::addColumn<QString>("title");
    QTest::addColumn<QString>("extension");
    QTest::addColumn<QString>("expected");
    QTest::newRow("plain") << QStringLiteral("Dinner ideas") << QStringLiteral("json")
                           << QStringLiteral("Dinner ideas.json");
    QTest::newRow("separators") << QStringLiteral("Plans: 2024/25?") << QStringLiteral("md")
                                << QStringLiteral("Plans 2024-25.md");
    QTest::newRow("reserved") << QStringLiteral("a*b \"c\" <d> | e\\f") << QStringLiteral("md")
                              << QStringLiteral("ab c d e-f.md");
    QTest::newRow("dots") << QStringLiteral("...hidden. ") << QStringLiteral("json")
                          << QStringLiteral("hidden.json");
    QTest::newRow("nothing left") << QStringLiteral("???") << QStringLiteral("json")
                                  << QStringLiteral("Chat.json");
    QTest::newRow("unicode") << QStringLiteral("Sorting in C++ — «quick»") << QStringLiteral("md")
                             << QStringLiteral("Sorting in C++ — «quick».md");
    QTest::newRow("long") << QString(150, u'x') << QStringLiteral("md")
                          << QString(100, u'x') + QStringLiteral(".md");
  }

  void exportFileNamesComeFromTheTitle() {
    QFETCH(QString, title);
    QFETCH(QString, extension);
    QFETCH(QString, expected);
    QCOMPARE(export_file_name(title, extension), expected);
  }

  void badFilesAreRefusedClearly_data() {
    QTest::addColumn<QByteArray>("content");
    QTest::addColumn<QString>("says");

    const QByteArray head = R"("format": "quire-chat", "version": 1, "title": "t")";
    const auto with = [&](const QByteArray& rest) { return "{" + head + ", " + rest + "}"; };
    QTest::newRow("not JSON") << QByteArray("{\"format\": ") << QStringLiteral("not valid JSON");
    QTest::newRow("empty") << QByteArray() << QStringLiteral("not valid JSON");
    QTest::newRow("array") << QByteArray("[]") << QStringLiteral("not a Quire chat export");
    QTest::newRow("other program") << QByteArray(R"({"format": "gpt4all", "messages": []})")
                                   << QStringLiteral("not a Quire chat export");
    QTest::newRow("newer format")
        << QByteArray(R"({"format": "quire-chat", "version": 3, "title": "t", "messages": []})")
        << QStringLiteral("newer version of Quire (format version 3; this version reads up to 2)");
    QTest::newRow("version as text")
        << QByteArray(R"({"format": "quire-chat", "version": "1", "messages": []})")
        << QStringLiteral("version: expected a positive integer");
    QTest::newRow("title missing")
        << QByteArray(R"({"format": "quire-chat", "version": 1, "messages": []})")
        << QStringLiteral("title: expected a string");
    QTest::newRow("no messages") << with(R"("model": {})")
                                 << QStringLiteral("messages: expected an array");
    QTest::newRow("message not an object")
        << with(R"("messages": [3])") << QStringLiteral("messages[0]: expected an object");
    QTest::newRow("unknown role")
        << with(R"("messages": [{"role": "user", "text": "a"}, {"role": "narrator", "text": "b"}])")
        << QStringLiteral("messages[1].role: \"narrator\" is not one of system, user, assistant");
    QTest::newRow("text missing") << with(R"("messages": [{"role": "user"}])")
                                  << QStringLiteral("messages[0].text: expected a string");
    QTest::newRow("fractional token")
        << with(R"("messages": [{"role": "user", "text": "a", "tokens": [1, 2.5]}])")
        << QStringLiteral("messages[0].tokens[1]: expected an integer token id");
    QTest::newRow("token beyond 32 bits")
        << with(R"("messages": [{"role": "user", "text": "a", "tokens": [4294967296]}])")
        << QStringLiteral("messages[0].tokens[0]: expected an integer token id");
    QTest::newRow("token as text")
        << with(R"("messages": [{"role": "user", "text": "a", "tokens": ["7"]}])")
        << QStringLiteral("messages[0].tokens[0]");
    QTest::newRow("bad date")
        << with(R"("messages": [{"role": "user", "text": "a", "created": "yesterday"}])")
        << QStringLiteral("messages[0].created: expected a date");
    QTest::newRow("stats not an object")
        << with(R"("messages": [{"role": "assistant", "text": "a", "stats": 5}])")
        << QStringLiteral("messages[0].stats: expected an object");
    QTest::newRow("model not an object") << with(R"("model": "tiny", "messages": [])")
                                         << QStringLiteral("model: expected an object");
  }

  void badFilesAreRefusedClearly() {
    QFETCH(QByteArray, content);
    QFETCH(QString, says);
    const QString file = dir_->filePath(QStringLiteral("bad.json"));
    test::write_bytes(file, content);
    ChatStore store;
    QVERIFY(store.open(test::options(dir_->filePath(QStringLiteral("chats.sqlite")))));
    QString error;
    QVERIFY(!import_chat_json(store, file, &error));
    QVERIFY2(error.contains(file), qPrintable(error));
    QVERIFY2(error.contains(says), qPrintable(error));
    QVERIFY(store.list_chats().isEmpty());
  }

  void missingFileIsNamed() {
    ChatStore store;
    QVERIFY(store.open(test::options(dir_->filePath(QStringLiteral("chats.sqlite")))));
    const QString file = dir_->filePath(QStringLiteral("absent.json"));
    QString error;
    QVERIFY(!import_chat_json(store, file, &error));
    QVERIFY2(error.startsWith(QStringLiteral("Cannot import ") + file), qPrintable(error));
  }

  void markdownIsExact() {
    ChatDocument document = sample();
    document.messages << make_message(Role::User, QStringLiteral("And in reverse?\n\n"))
                      << make_message(Role::Assistant,
                                      QStringLiteral("Interrupted:\n~~~~python\nxs.sort(\n```"))
                      << make_message(Role::User, QString());
    const QString expected = QStringLiteral(
        "# Sorting in C++ — «quick»\n"
        "\n"
        "## System\n"
        "\n"
        "You write code.\n"
        "\n"
        "## User\n"
        "\n"
        "Sort a vector?\n"
        "\n"
        "## Assistant\n"
        "\n"
        "Use std::sort:\n"
        "\n"
        "```cpp\n"
        "std::sort(v.begin(), v.end());\n"
        "```\n"
        "\n"
        "## User\n"
        "\n"
        "And in reverse?\n"
        "\n"
        "## Assistant\n"
        "\n"
        "Interrupted:\n"
        "~~~~python\n"
        "xs.sort(\n"
        "```\n"
        "~~~~\n"
        "\n"
        "## User\n");
    QCOMPARE(chat_to_markdown(document), expected);

    document.title = QStringLiteral("  ");
    QVERIFY(chat_to_markdown(document).startsWith(QStringLiteral("# Untitled chat\n\n## System")));
  }

  void markdownFileIsWritten() {
    ChatStore store;
    QVERIFY(store.open(test::options(dir_->filePath(QStringLiteral("chats.sqlite")))));
    const auto chat = store.insert_document(sample());
    const QString file = dir_->filePath(QStringLiteral("chat.md"));
    QString error;
    QVERIFY2(export_chat_markdown(store, *chat, file, &error), qPrintable(error));
    QCOMPARE(test::read_bytes(file), chat_to_markdown(sample()).toUtf8());

    const QString nowhere = dir_->filePath(QStringLiteral("no/such/folder/chat.md"));
    QVERIFY(!export_chat_markdown(store, *chat, nowhere, &error));
    QVERIFY2(error.contains(nowhere), qPrintable(error));
    QVERIFY(!export_chat_json(store, ChatId{999}, file, &error));
    QCOMPARE(test::read_bytes(file), chat_to_markdown(sample()).toUtf8());
  }
};

QUIRE_TEST(ChatExportTest)
#include "test_chat_export.moc"
