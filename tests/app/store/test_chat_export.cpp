// Export to JSON and back, refusing bad files clearly; Markdown, exactly.

#include <QHash>
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

QStringList texts(const QList<Message>& messages) {
  QStringList out;
  for (const Message& message : messages)
    out << message.text;
  return out;
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
    QVERIFY(json.contains("\"version\": 3"));
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

  void treeAndSettingsSurviveExportAndImport() {
    ChatStore store;
    QVERIFY(store.open(test::options(dir_->filePath(QStringLiteral("chats.sqlite")))));
    const auto chat = *store.insert_document(sample());
    const QList<Message> path = store.current_path(chat);
    // A second reply to the question, and an edited question with its reply;
    // then back to the first reply, so the current path is not the newest.
    const auto again = *store.begin_reply_after(path[1].id, QStringLiteral("tiny"));
    QVERIFY(store.write_reply(again, QStringLiteral("Or std::ranges::sort."), std::vector{4, 5},
                              std::nullopt));
    const auto edited = *store.add_message(chat, path[0].id, Role::User, QStringLiteral("Sort?"));
    QVERIFY(store.begin_reply(chat, QString()));
    QVERIFY(store.select_message(path[2].id));
    ChatSettings settings;
    settings.system_prompt = QStringLiteral("Terse.");
    settings.min_p = 0.1;
    settings.max_new_tokens = 256;
    QVERIFY(store.set_chat_settings(chat, settings));

    const ChatDocument original = *store.document(chat);
    QCOMPARE(original.messages.size(), 6);
    QCOMPARE(original.current, std::optional<MessageId>(path[2].id));
    QCOMPARE(original.settings, settings);
    QCOMPARE(texts(current_path(original)), texts(path));

    // Through JSON the document is the same, ids included.
    const QByteArray json = chat_to_json(original);
    QVERIFY(json.contains("\"chat_settings\": {"));
    QString error;
    const auto read = chat_from_json(json, &error);
    QVERIFY2(read, qPrintable(error));
    ChatDocument expected = original;
    for (Message& message : expected.messages)
      message.chat = ChatId{};
    QCOMPARE(*read, expected);

    // Imported, the tree has new ids and the same shape and current path.
    const QString file = dir_->filePath(QStringLiteral("tree.json"));
    QVERIFY2(export_chat_json(store, chat, file, &error), qPrintable(error));
    const auto imported = import_chat_json(store, file, &error);
    QVERIFY2(imported, qPrintable(error));
    const ChatDocument copy = *store.document(*imported);
    QCOMPARE(copy.settings, settings);
    QCOMPARE(texts(store.current_path(*imported)), texts(path));
    QCOMPARE(copy.messages.size(), 6);
    QHash<qint64, qint64> old_of;  // new id -> original id, by order
    for (int i = 0; i < copy.messages.size(); ++i) {
      QVERIFY(copy.messages[i].id != original.messages[i].id);
      old_of.insert(raw(copy.messages[i].id), raw(original.messages[i].id));
      QCOMPARE(copy.messages[i].text, original.messages[i].text);
      QCOMPARE(copy.messages[i].tokens, original.messages[i].tokens);
      QCOMPARE(copy.messages[i].position, original.messages[i].position);
      QCOMPARE(copy.messages[i].parent.has_value(), original.messages[i].parent.has_value());
      if (copy.messages[i].parent) {
        QCOMPARE(old_of.value(raw(*copy.messages[i].parent)), raw(*original.messages[i].parent));
      }
    }
    QCOMPARE(store.siblings(store.current_path(*imported)[1].id)->ids.size(), 2);
    QVERIFY(store.message(edited));

    // Markdown holds the current path only.
    const QString markdown = chat_to_markdown(original);
    QVERIFY(markdown.contains(QStringLiteral("Use std::sort:")));
    QVERIFY(!markdown.contains(QStringLiteral("ranges")));
    QVERIFY(!markdown.contains(QStringLiteral("## User\n\nSort?\n")));
    QCOMPARE(markdown, chat_to_markdown(without_ids(sample())));
  }

  void version1FilesImportAsOneBranch() {
    const QByteArray version1 = R"({
      "format": "quire-chat", "version": 1, "title": "Old export",
      "created": "2024-05-01T12:00:00.000Z", "updated": "2024-05-01T12:00:05.000Z",
      "model": {"dir": "/models/tiny", "settings": {"temperature": 0.7}},
      "messages": [
        {"role": "user", "text": "Hello", "tokens": [1, 2],
         "created": "2024-05-01T12:00:00.000Z", "updated": "2024-05-01T12:00:00.000Z"},
        {"role": "assistant", "text": "Hi!", "stats": {"stop_reason": "eos"},
         "created": "2024-05-01T12:00:01.000Z", "updated": "2024-05-01T12:00:02.000Z"},
        {"role": "user", "text": "Bye", "created": "2024-05-01T12:00:05.000Z"}
      ]})";
    const QString file = dir_->filePath(QStringLiteral("old.json"));
    test::write_bytes(file, version1);
    ChatStore store;
    QVERIFY(store.open(test::options(dir_->filePath(QStringLiteral("chats.sqlite")))));
    QString error;
    const auto chat = import_chat_json(store, file, &error);
    QVERIFY2(chat, qPrintable(error));
    const QList<Message> path = store.current_path(*chat);
    QCOMPARE(texts(path), (QStringList{"Hello", "Hi!", "Bye"}));
    QCOMPARE(store.message_tree(*chat), path);
    QCOMPARE(path[0].parent, std::nullopt);
    QCOMPARE(path[1].parent, std::optional<MessageId>(path[0].id));
    QCOMPARE(path[2].parent, std::optional<MessageId>(path[1].id));
    QCOMPARE(path[0].tokens, (std::vector<std::int32_t>{1, 2}));
    QCOMPARE(path[1].stats->stop_reason, QStringLiteral("eos"));
    QCOMPARE(path[2].updated, utc_ms(1714564805000));
    QCOMPARE(store.chat(*chat)->model.model_dir, QStringLiteral("/models/tiny"));
    QCOMPARE(store.chat_settings(*chat), std::optional<ChatSettings>(ChatSettings{}));
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
        << QByteArray(R"({"format": "quire-chat", "version": 5, "title": "t", "messages": []})")
        << QStringLiteral("newer version of Quire (format version 5; this version reads up to 4)");
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

    const QByteArray head2 = R"("format": "quire-chat", "version": 2, "title": "t")";
    const auto with2 = [&](const QByteArray& rest) { return "{" + head2 + ", " + rest + "}"; };
    QTest::newRow("parent comes later")
        << with2(R"("messages": [{"role": "user", "text": "a", "id": 1, "parent": 2},
                                 {"role": "user", "text": "b", "id": 2}])")
        << QStringLiteral("messages[0].parent: expected the id of an earlier message");
    QTest::newRow("id twice") << with2(R"("messages": [{"role": "user", "text": "a", "id": 1},
                                 {"role": "user", "text": "b", "id": 1, "parent": 1}])")
                              << QStringLiteral(
                                     "messages[1].id: 1 is the id of an earlier message");
    QTest::newRow("some ids") << with2(R"("messages": [{"role": "user", "text": "a", "id": 1},
                                 {"role": "user", "text": "b"}])")
                              << QStringLiteral(
                                     "messages[1].id: expected an id on every message or on none");
    QTest::newRow("id not an integer")
        << with2(R"("messages": [{"role": "user", "text": "a", "id": 1.5}])")
        << QStringLiteral("messages[0].id: expected a message id (a positive integer)");
    QTest::newRow("current not a message")
        << with2(R"("current": 9, "messages": [{"role": "user", "text": "a", "id": 1}])")
        << QStringLiteral("current: expected the id of a message");
    QTest::newRow("settings out of range")
        << with2(R"("chat_settings": {"top_p": 1.5}, "messages": [])")
        << QStringLiteral("chat_settings: top_p must be greater than 0 and at most 1 (got 1.5)");
    QTest::newRow("setting of the wrong type")
        << with2(R"("chat_settings": {"temperature": "warm"}, "messages": [])")
        << QStringLiteral("chat_settings.temperature: expected a number");
    QTest::newRow("fractional token limit")
        << with2(R"("chat_settings": {"max_new_tokens": 10.5}, "messages": [])")
        << QStringLiteral("chat_settings.max_new_tokens: expected an integer");
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
