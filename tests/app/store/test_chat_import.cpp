// Chats from other applications' exports (fixtures in tests/data/chat_import,
// written from each format's documentation and source): trees, roles, texts,
// times and current paths as the application showed them; malformed files
// refused by name, with nothing added.

#include <QTemporaryDir>
#include <QTest>

#include "quire/app/store/chat_export.h"
#include "quire/app/store/chat_import.h"
#include "quire/app/store/chat_store.h"
#include "store_test_helpers.h"
#include "test_main.h"

using namespace quire::store;

namespace {

QString fixture(const QString& name) {
  return QStringLiteral(QUIRE_TEST_DATA_DIR "/chat_import/") + name;
}

ChatFileContents read_fixture(const QString& name) {
  QString error;
  std::optional<ChatFileContents> contents =
      read_chat_file(test::read_bytes(fixture(name)), &error);
  if (!contents) qFatal("%s: %s", qPrintable(name), qPrintable(error));
  return *contents;
}

QDateTime utc_s(double seconds) {
  return QDateTime::fromMSecsSinceEpoch(qint64(seconds * 1000.0), Qt::UTC);
}

// "role: text" per message, with the parent's id (0 for a first message).
QStringList shape(const ChatDocument& document) {
  QStringList lines;
  for (const Message& message : document.messages) {
    lines << QStringLiteral("%1<-%2 %3: %4")
                 .arg(raw(message.id))
                 .arg(message.parent ? raw(*message.parent) : 0)
                 .arg(role_name(message.role), message.text);
  }
  return lines;
}

QStringList path_texts(const ChatDocument& document) {
  QStringList texts;
  for (const Message& message : current_path(document))
    texts << message.text;
  return texts;
}

}  // namespace

class ChatImportTest : public QObject {
  Q_OBJECT

  std::unique_ptr<QTemporaryDir> dir_;

 private slots:
  void init() { dir_ = std::make_unique<QTemporaryDir>(); }

  void chatGptExportKeepsBranchesAndLeavesHiddenNodesOut() {
    const ChatFileContents contents = read_fixture(QStringLiteral("chatgpt_conversations.json"));
    QCOMPARE(contents.format, QStringLiteral("ChatGPT export"));
    QCOMPARE(contents.chats.size(), 2);

    const ChatDocument& sorting = contents.chats[0];
    QCOMPARE(sorting.title, QStringLiteral("Sorting in Python"));
    QCOMPARE(sorting.created, utc_s(1717236000.123));
    QCOMPARE(sorting.updated, utc_s(1717236600.5));
    // The root and the hidden system message are gone; the two versions of
    // the first question are siblings at the top.
    QCOMPARE(shape(sorting),
             (QStringList{
                 QStringLiteral("1<-0 user: How do I sort a list of tuples by the second item?"),
                 QStringLiteral("2<-1 assistant: Use `sorted` with a key:\n\n```python\n"
                                "sorted(pairs, key=lambda p: p[1])\n```"),
                 QStringLiteral("3<-0 user: How do I sort a list of tuples by the second item, "
                                "descending?"),
                 QStringLiteral("4<-3 assistant: Add `reverse=True`."),
             }));
    QCOMPARE(sorting.current, std::optional<MessageId>(MessageId{4}));
    QCOMPARE(sorting.messages[1].created, utc_s(1717236015.25));
    QCOMPARE(sorting.messages[3].position, 1);

    const ChatDocument& picture = contents.chats[1];
    QCOMPARE(shape(picture), (QStringList{
                                 QStringLiteral("1<-0 user: [image]\n\nWhat is in this picture?"),
                                 QStringLiteral("2<-1 tool: (64, 64)"),
                                 QStringLiteral("3<-2 assistant: A small 64×64 icon of a cat."),
                             }));
  }

  void openWebUiExportReadsHistoryTreesAndFlatLists() {
    const ChatFileContents contents = read_fixture(QStringLiteral("open_webui_export.json"));
    QCOMPARE(contents.format, QStringLiteral("Open WebUI export"));
    QCOMPARE(contents.chats.size(), 2);

    const ChatDocument& capitals = contents.chats[0];
    QCOMPARE(capitals.title, QStringLiteral("Capital cities"));
    QCOMPARE(capitals.created, utc_s(1720000000));
    QCOMPARE(shape(capitals), (QStringList{
                                  QStringLiteral("1<-0 user: What is the capital of Australia?"),
                                  QStringLiteral("2<-1 assistant: Sydney."),
                                  QStringLiteral("3<-2 user: Are you sure?"),
                                  QStringLiteral("4<-1 assistant: Canberra."),
                              }));
    QCOMPARE(path_texts(capitals), (QStringList{QStringLiteral("What is the capital of Australia?"),
                                                QStringLiteral("Canberra.")}));

    const ChatDocument& old = contents.chats[1];
    QCOMPARE(shape(old), (QStringList{
                             QStringLiteral("1<-0 system: Answer briefly."),
                             QStringLiteral("2<-1 user: Name a prime."),
                             QStringLiteral("3<-2 assistant: 7"),
                         }));
    QCOMPARE(old.messages[2].created, utc_s(1700000002));
  }

  void lmStudioVersionsBecomeSiblings() {
    const ChatFileContents contents = read_fixture(QStringLiteral("lm_studio.conversation.json"));
    QCOMPARE(contents.format, QStringLiteral("LM Studio conversation"));
    QCOMPARE(contents.chats.size(), 1);
    const ChatDocument& haiku = contents.chats[0];
    QCOMPARE(haiku.title, QStringLiteral("Haiku about autumn"));
    QCOMPARE(haiku.created, utc_s(1725000000));
    QCOMPARE(haiku.settings.system_prompt,
             std::optional<QString>(QStringLiteral("You are a poet.")));
    // The second version was selected, so the chat goes on from it.
    QCOMPARE(shape(haiku), (QStringList{
                               QStringLiteral("1<-0 user: Write a haiku about autumn."),
                               QStringLiteral("2<-1 assistant: Leaves drift on the pond"),
                               QStringLiteral("3<-1 assistant: Red maple whispers"),
                               QStringLiteral("4<-3 user: Shorter, please."),
                           }));
    QCOMPARE(haiku.current, std::optional<MessageId>(MessageId{4}));
  }

  void importAddsEveryChatOfAFile() {
    ChatStore store;
    QVERIFY(store.open(test::options(dir_->filePath(QStringLiteral("chats.sqlite")))));
    QString error;
    const auto imported =
        import_chat_file(store, fixture(QStringLiteral("chatgpt_conversations.json")), &error);
    QVERIFY2(imported, qPrintable(error));
    QCOMPARE(imported->format, QStringLiteral("ChatGPT export"));
    QCOMPARE(imported->chats.size(), 2);
    const auto sorting = store.document(imported->chats[0]);
    QVERIFY(sorting);
    QCOMPARE(sorting->title, QStringLiteral("Sorting in Python"));
    QCOMPARE(sorting->messages.size(), 4);
    QCOMPARE(path_texts(*sorting),
             (QStringList{QStringLiteral("How do I sort a list of tuples by the second item, "
                                         "descending?"),
                          QStringLiteral("Add `reverse=True`.")}));

    // Again: the titles say these are copies.
    const auto again =
        import_chat_file(store, fixture(QStringLiteral("chatgpt_conversations.json")), &error);
    QVERIFY2(again, qPrintable(error));
    QCOMPARE(store.chat(again->chats[0])->title, QStringLiteral("Sorting in Python (imported)"));
    QCOMPARE(store.chat(again->chats[1])->title,
             QStringLiteral("A picture and a search (imported)"));
  }

  void malformedFilesAreRefusedByName_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("error");
    QTest::newRow("ChatGPT, missing parent")
        << QStringLiteral("chatgpt_missing_parent.json")
        << QStringLiteral(
               "Cannot import chatgpt_missing_parent.json: conversation 3, mapping "
               "node 'abc': parent 'xyz' is missing.");
    QTest::newRow("Open WebUI, cycle")
        << QStringLiteral("open_webui_cycle.json")
        << QStringLiteral(
               "Cannot import open_webui_cycle.json: conversation 1, history message "
               "'a': its parents form a cycle and never reach a first message.");
    QTest::newRow("LM Studio, selection out of range")
        << QStringLiteral("lm_studio_bad_selection.conversation.json")
        << QStringLiteral(
               "Cannot import lm_studio_bad_selection.conversation.json: message 2: "
               "\"currentlySelected\" is 2, but the message has 1 versions (counted "
               "from 0).");
  }

  void malformedFilesAreRefusedByName() {
    QFETCH(QString, file);
    QFETCH(QString, error);
    ChatStore store;
    QVERIFY(store.open(test::options(dir_->filePath(QStringLiteral("chats.sqlite")))));
    QString problem;
    QVERIFY(!import_chat_file(store, fixture(file), &problem));
    QCOMPARE(problem, error);
    QVERIFY(store.list_chats().isEmpty());
  }

  void unknownFilesSayWhatIsImported() {
    ChatStore store;
    QVERIFY(store.open(test::options(dir_->filePath(QStringLiteral("chats.sqlite")))));
    const QString path = dir_->filePath(QStringLiteral("notes.json"));
    test::write_bytes(path, QByteArrayLiteral("{\"notes\": []}"));
    QString problem;
    QVERIFY(!import_chat_file(store, path, &problem));
    QCOMPARE(problem,
             QStringLiteral("Cannot import notes.json: not a Quire chat export (no \"format\": "
                            "\"quire-chat\"); Quire imports its own chats, ChatGPT's "
                            "conversations.json, Open WebUI's chat exports and LM Studio's "
                            "conversation files."));
    // An OpenAI request has messages too, but is no conversation file.
    const QString request = dir_->filePath(QStringLiteral("request.json"));
    test::write_bytes(request, QByteArrayLiteral("{\"model\": \"x\", \"messages\": []}"));
    QVERIFY(!import_chat_file(store, request, &problem));
    QVERIFY2(problem.startsWith(QStringLiteral("Cannot import request.json: not a Quire chat "
                                               "export")),
             qPrintable(problem));
    QVERIFY(store.list_chats().isEmpty());
  }

  void quireExportsAreReadWhateverTheirLength() {
    // QJsonDocument writes keys sorted: "format" comes after the chat's
    // settings, which a long system prompt pushes far down the file.
    ChatDocument document = read_fixture(QStringLiteral("open_webui_export.json")).chats[0];
    document.settings.system_prompt = QString(5000, u'x');
    QString error;
    const auto contents = read_chat_file(chat_to_json(document), &error);
    QVERIFY2(contents, qPrintable(error));
    QCOMPARE(contents->format, QStringLiteral("Quire chat"));
    QCOMPARE(contents->chats.size(), 1);
    QCOMPARE(contents->chats[0].settings.system_prompt, document.settings.system_prompt);
    QCOMPARE(shape(contents->chats[0]), shape(document));
    // Quire's own problems are told as they are.
    QVERIFY(!read_chat_file(QByteArrayLiteral("{\"format\": \"quire-chat\", \"version\": 99}"),
                            &error));
    QVERIFY2(error.startsWith(QStringLiteral("written by a newer version of Quire")),
             qPrintable(error));
  }

  void aFailingChatLeavesNoneOfTheBatch() {
    ChatStore store;
    QVERIFY(store.open(test::options(dir_->filePath(QStringLiteral("chats.sqlite")))));
    ChatFileContents contents = read_fixture(QStringLiteral("open_webui_export.json"));
    // The second chat names a parent that does not come before its child.
    contents.chats[1].messages[1].parent = MessageId{99};
    QVERIFY(!store.insert_documents(contents.chats));
    QVERIFY(store.list_chats().isEmpty());
    QVERIFY(store.insert_documents({contents.chats[0]}));
    QCOMPARE(store.list_chats().size(), 1);
  }
};

QUIRE_TEST(ChatImportTest)
#include "test_chat_import.moc"
