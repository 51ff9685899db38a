// Tool calls and results in the chat store: a reply's calls and a tool
// message per call are kept, read back, branched and restored like any
// message; a chat's tool settings persist; JSON export and import carry them
// and files without them still import; Markdown shows each call and result;
// a version-3 history opens with every chat and takes tool messages.

#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTest>

#include "quire/app/store/chat_export.h"
#include "quire/app/store/chat_store.h"
#include "store_test_helpers.h"
#include "test_main.h"

using namespace quire::store;
using quire::store::test::RawDatabase;

namespace {

const ToolCall kWeather{QStringLiteral("call_1"), QStringLiteral("get_weather"),
                        QStringLiteral("{\"city\": \"Paris\"}"), QStringLiteral("weather")};
const ToolCall kTime{QStringLiteral("call_2"), QStringLiteral("get_time"),
                     QStringLiteral("{\"zone\": \"Europe/Paris\"}"), QStringLiteral("clock")};

// The version-3 layout (as its migration left it) with one chat: a system
// message, a question, two replies (the second selected), one deleted reply.
const QStringList kVersion3Fixture = {
    QStringLiteral("CREATE TABLE chats (id INTEGER PRIMARY KEY AUTOINCREMENT,"
                   " title TEXT NOT NULL DEFAULT '', created INTEGER NOT NULL,"
                   " updated INTEGER NOT NULL, model_dir TEXT NOT NULL DEFAULT '',"
                   " settings TEXT NOT NULL DEFAULT '{}', deleted_at INTEGER,"
                   " system_prompt TEXT, temperature REAL, top_p REAL, min_p REAL,"
                   " repetition_penalty REAL, max_new_tokens INTEGER, prompt_format TEXT)"),
    QStringLiteral("CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT,"
                   " chat_id INTEGER NOT NULL REFERENCES chats(id) ON DELETE CASCADE,"
                   " parent_id INTEGER REFERENCES messages(id), position INTEGER NOT NULL,"
                   " selected INTEGER NOT NULL DEFAULT 0,"
                   " role TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant')),"
                   " text TEXT NOT NULL DEFAULT '', tokens BLOB, created INTEGER NOT NULL,"
                   " updated INTEGER NOT NULL, stats TEXT)"),
    QStringLiteral("CREATE INDEX messages_by_chat ON messages(chat_id, position)"),
    QStringLiteral("CREATE INDEX messages_by_parent ON messages(parent_id)"),
    QStringLiteral("CREATE TABLE deleted_messages (id INTEGER PRIMARY KEY,"
                   " chat_id INTEGER NOT NULL REFERENCES chats(id) ON DELETE CASCADE,"
                   " parent_id INTEGER, position INTEGER NOT NULL, selected INTEGER NOT NULL,"
                   " role TEXT NOT NULL, text TEXT NOT NULL, tokens BLOB,"
                   " created INTEGER NOT NULL, updated INTEGER NOT NULL, stats TEXT,"
                   " branch INTEGER NOT NULL, deleted_at INTEGER NOT NULL)"),
    QStringLiteral("CREATE INDEX deleted_messages_by_branch ON deleted_messages(branch)"),
    QStringLiteral("CREATE INDEX deleted_messages_by_chat ON deleted_messages(chat_id)"),
    QStringLiteral("CREATE INDEX chats_by_activity ON chats(updated DESC, id DESC)"
                   " WHERE deleted_at IS NULL"),
    QStringLiteral("CREATE INDEX chats_deleted ON chats(deleted_at) WHERE deleted_at IS NOT NULL"),
    QStringLiteral("INSERT INTO chats (id, title, created, updated, temperature) VALUES"
                   " (5, 'Trees', 1714564800000, 1714564900000, 0.25)"),
    QStringLiteral("INSERT INTO messages VALUES (50, 5, NULL, 0, 3, 'system', 'Be brief.', NULL,"
                   " 1714564800000, 1714564800000, NULL)"),
    QStringLiteral("INSERT INTO messages VALUES (51, 5, 50, 1, 3, 'user', 'Oak or elm?', NULL,"
                   " 1714564810000, 1714564810000, NULL)"),
    QStringLiteral("INSERT INTO messages VALUES (52, 5, 51, 2, 1, 'assistant', 'Oak.', NULL,"
                   " 1714564820000, 1714564820000, NULL)"),
    QStringLiteral("INSERT INTO messages VALUES (53, 5, 51, 2, 3, 'assistant', 'Elm.', NULL,"
                   " 1714564830000, 1714564830000, NULL)"),
    QStringLiteral("INSERT INTO deleted_messages VALUES (54, 5, 51, 2, 2, 'assistant', 'Ash.',"
                   " NULL, 1714564825000, 1714564825000, NULL, 54, 1714564840000)"),
    QStringLiteral("PRAGMA application_id = %1").arg(0x51554952),
    QStringLiteral("PRAGMA user_version = 3"),
};

QList<Role> roles_of(const QList<Message>& messages) {
  QList<Role> roles;
  for (const Message& message : messages)
    roles << message.role;
  return roles;
}

}  // namespace

class ToolMessagesTest : public QObject {
  Q_OBJECT

  std::unique_ptr<QTemporaryDir> dir_;
  QString path() const { return dir_->filePath(QStringLiteral("chats.sqlite")); }

  // A chat with a question, a reply that calls two tools, their results
  // (one allowed, one denied) and the answer.
  ChatId tool_loop(ChatStore& store) {
    const ChatId chat = *store.create_chat(QStringLiteral("Weather"));
    store.append_message(chat, Role::System, QStringLiteral("Be brief."));
    store.append_message(chat, Role::User, QStringLiteral("Weather and time in Paris?"));
    const MessageId reply = *store.begin_reply(chat, QStringLiteral("tiny"));
    store.write_reply(reply, QString(), std::vector<std::int32_t>{7, 8, 9}, std::nullopt);
    store.set_tool_calls(reply, {kWeather, kTime});
    store.append_tool_result(chat, {kWeather.id, kWeather.name, ToolStatus::Allowed},
                             QStringLiteral("{\"temperature\": 18}"));
    store.append_tool_result(chat, {kTime.id, kTime.name, ToolStatus::Denied},
                             QStringLiteral("The user did not allow this call."));
    const MessageId answer = *store.begin_reply(chat, QStringLiteral("tiny"));
    store.write_reply(answer, QStringLiteral("18 °C."), {}, std::nullopt);
    return chat;
  }

 private slots:
  void init() { dir_ = std::make_unique<QTemporaryDir>(); }

  void namesAreStable() {
    QCOMPARE(role_name(Role::Tool), QStringLiteral("tool"));
    QCOMPARE(role_from_name(QStringLiteral("tool")), std::optional<Role>(Role::Tool));
    for (const auto& [status, name] :
         std::vector<std::pair<ToolStatus, QString>>{{ToolStatus::Allowed, "allowed"},
                                                     {ToolStatus::Denied, "denied"},
                                                     {ToolStatus::Failed, "failed"},
                                                     {ToolStatus::TimedOut, "timed_out"},
                                                     {ToolStatus::Cancelled, "cancelled"}}) {
      QCOMPARE(tool_status_name(status), name);
      QCOMPARE(tool_status_from_name(name), std::optional<ToolStatus>(status));
    }
    QCOMPARE(tool_status_from_name(QStringLiteral("maybe")), std::nullopt);
  }

  void callsAndResultsAreKept() {
    ChatId chat{};
    {
      ChatStore store;
      QVERIFY(store.open(test::options(path())));
      chat = tool_loop(store);
      // A result must answer a call of the reply above it.
      const auto leaf = store.current_path(chat).last().id;
      QVERIFY(!store.append_tool_result(chat, {kWeather.id, kWeather.name, ToolStatus::Allowed},
                                        QStringLiteral("late")));
      QCOMPARE(store.error(), StoreError::InvalidArgument);
      QCOMPARE(store.current_path(chat).last().id, leaf);
      QVERIFY(!store.set_tool_calls(store.current_path(chat)[1].id, {kWeather}));
      QCOMPARE(store.error(), StoreError::InvalidArgument);
    }
    ChatStore store;
    QVERIFY(store.open(test::options(path())));
    const QList<Message> path = store.current_path(chat);
    QCOMPARE(roles_of(path), (QList<Role>{Role::System, Role::User, Role::Assistant, Role::Tool,
                                          Role::Tool, Role::Assistant}));
    QCOMPARE(path[2].tool_calls, (QList<ToolCall>{kWeather, kTime}));
    QCOMPARE(path[2].tokens, (std::vector<std::int32_t>{7, 8, 9}));
    QCOMPARE(path[2].tool_result, std::nullopt);
    QCOMPARE(path[3].tool_result,
             std::optional<ToolResult>({kWeather.id, kWeather.name, ToolStatus::Allowed}));
    QCOMPARE(path[3].text, QStringLiteral("{\"temperature\": 18}"));
    QCOMPARE(path[4].tool_result,
             std::optional<ToolResult>({kTime.id, kTime.name, ToolStatus::Denied}));
    QVERIFY(path[4].tool_calls.isEmpty());
    QCOMPARE(path[5].text, QStringLiteral("18 °C."));
    QCOMPARE(store.message(path[3].id)->tool_result, path[3].tool_result);

    // A result written again: the call timed out after all.
    QVERIFY(store.set_tool_result(path[3].id, {kWeather.id, kWeather.name, ToolStatus::TimedOut},
                                  QStringLiteral("No answer within 30 s.")));
    QCOMPARE(store.message(path[3].id)->tool_result->status, ToolStatus::TimedOut);
    QVERIFY(!store.set_tool_result(path[2].id, {kWeather.id, kWeather.name, ToolStatus::Failed},
                                   QString()));

    // Tool messages are nodes like any other: deleted and restored exactly,
    // branched into a new chat.
    const QList<Message> before = store.message_tree(chat);
    QVERIFY(store.delete_branch(path[3].id));
    QCOMPARE(store.current_path(chat).size(), 3);
    QVERIFY(store.restore_branch(path[3].id));
    QCOMPARE(store.message_tree(chat), before);
    const ChatId branch = *store.branch_chat(path[4].id, QStringLiteral("Branch"));
    const QList<Message> copied = store.current_path(branch);
    QCOMPARE(copied.size(), 5);
    QCOMPARE(copied[2].tool_calls, path[2].tool_calls);
    QCOMPARE(copied[4].tool_result, path[4].tool_result);
  }

  void toolSettingsPersist() {
    ChatId chat{};
    ChatSettings settings;
    settings.tools_enabled = false;
    settings.always_allowed_tools = {QStringLiteral("weather/get_weather"),
                                     QStringLiteral("clock/get_time")};
    {
      ChatStore store;
      QVERIFY(store.open(test::options(path())));
      chat = *store.create_chat(QStringLiteral("t"));
      QCOMPARE(store.chat_settings(chat), std::optional<ChatSettings>(ChatSettings{}));
      QVERIFY(store.set_chat_settings(chat, settings));
    }
    ChatStore store;
    QVERIFY(store.open(test::options(path())));
    QCOMPARE(store.chat_settings(chat), std::optional<ChatSettings>(settings));
    settings.tools_enabled = true;
    settings.always_allowed_tools.clear();
    QVERIFY(store.set_chat_settings(chat, settings));
    QCOMPARE(store.chat_settings(chat), std::optional<ChatSettings>(settings));
  }

  void exportsCarryCallsAndResults() {
    ChatStore store;
    QVERIFY(store.open(test::options(path())));
    const ChatId chat = tool_loop(store);
    ChatSettings settings;
    settings.tools_enabled = true;
    settings.always_allowed_tools = {QStringLiteral("weather/get_weather")};
    QVERIFY(store.set_chat_settings(chat, settings));
    const ChatDocument document = *store.document(chat);

    const QByteArray json = chat_to_json(document);
    QVERIFY(json.contains("\"tool_calls\""));
    QVERIFY(json.contains("\"status\": \"denied\""));
    QString error;
    const auto read = chat_from_json(json, &error);
    QVERIFY2(read, qPrintable(error));
    ChatDocument expected = document;
    for (Message& message : expected.messages)
      message.chat = ChatId{};  // a file does not name the chat
    QCOMPARE(*read, expected);

    const ChatId imported = *store.insert_document(*read);
    const ChatDocument again = *store.document(imported);
    QCOMPARE(again.settings, settings);
    QCOMPARE(again.messages.size(), document.messages.size());
    for (qsizetype i = 0; i < again.messages.size(); ++i) {
      QCOMPARE(again.messages[i].role, document.messages[i].role);
      QCOMPARE(again.messages[i].tool_calls, document.messages[i].tool_calls);
      QCOMPARE(again.messages[i].tool_result, document.messages[i].tool_result);
    }

    const QString markdown = chat_to_markdown(document);
    QVERIFY2(markdown.contains(QStringLiteral(
                 "## Assistant\n\n**Tool call:** `get_weather` from `weather` (id `call_1`)\n\n"
                 "```json\n{\"city\": \"Paris\"}\n```\n\n**Tool call:** `get_time` from `clock` "
                 "(id `call_2`)\n\n```json\n{\"zone\": \"Europe/Paris\"}\n```\n\n## Tool\n\n"
                 "**Result of** `get_weather` (id `call_1`): allowed\n\n```\n{\"temperature\": "
                 "18}\n```\n\n## Tool\n\n**Result of** `get_time` (id `call_2`): denied\n\n```\n"
                 "The user did not allow this call.\n```\n\n## Assistant\n\n18 °C.\n")),
             qPrintable(markdown));
  }

  void resultsWithBackticksStayInTheirBlock() {
    ChatDocument document;
    document.title = QStringLiteral("t");
    Message result;
    result.role = Role::Tool;
    result.text = QStringLiteral("```\nrm -rf\n````");
    result.tool_result =
        ToolResult{QStringLiteral("c"), QStringLiteral("shell"), ToolStatus::Failed};
    document.messages = {result};
    QCOMPARE(chat_to_markdown(document),
             QStringLiteral("# t\n\n## Tool\n\n**Result of** `shell` (id `c`): failed\n\n"
                            "`````\n```\nrm -rf\n````\n`````\n"));
  }

  void olderFilesImportWithoutTools() {
    const QByteArray json = R"({"format": "quire-chat", "version": 2, "title": "old",
      "chat_settings": {"temperature": 0.5},
      "messages": [{"role": "user", "text": "hi"}, {"role": "assistant", "text": "yo"}]})";
    QString error;
    const auto read = chat_from_json(json, &error);
    QVERIFY2(read, qPrintable(error));
    QCOMPARE(read->messages.size(), 2);
    QVERIFY(read->messages[1].tool_calls.isEmpty());
    QCOMPARE(read->messages[1].tool_result, std::nullopt);
    QCOMPARE(read->settings.tools_enabled, std::nullopt);
    QVERIFY(read->settings.always_allowed_tools.isEmpty());
  }

  void badToolFieldsAreRefused_data() {
    QTest::addColumn<QByteArray>("messages");
    QTest::addColumn<QString>("says");
    QTest::newRow("unknown status")
        << QByteArray(R"([{"role": "tool", "text": "x",
                          "tool_result": {"call_id": "c", "status": "maybe"}}])")
        << QStringLiteral("messages[0].tool_result: expected an object with a \"call_id\"");
    QTest::newRow("call without id")
        << QByteArray(R"([{"role": "assistant", "text": "", "tool_calls": [{"name": "f"}]}])")
        << QStringLiteral("messages[0].tool_calls[0]: expected an object with \"id\"");
    QTest::newRow("calls not a list")
        << QByteArray(R"([{"role": "assistant", "text": "", "tool_calls": {}}])")
        << QStringLiteral("messages[0].tool_calls: expected an array of calls");
  }
  void badToolFieldsAreRefused() {
    QFETCH(QByteArray, messages);
    QFETCH(QString, says);
    const QByteArray json =
        R"({"format": "quire-chat", "version": 3, "title": "t", "messages": )" + messages + "}";
    QString error;
    QVERIFY(!chat_from_json(json, &error));
    QVERIFY2(error.contains(says), qPrintable(error));
  }

  void version3HistoryOpensAndTakesTools() {
    {
      RawDatabase raw(path());
      QVERIFY(raw.exec(kVersion3Fixture));
    }
    ChatStore store;
    QVERIFY2(store.open(test::options(path())), qPrintable(store.error_string()));
    const QList<Message> path = store.current_path(ChatId{5});
    QCOMPARE(path.size(), 3);
    QCOMPARE(path[2].id, MessageId{53});
    QCOMPARE(path[2].text, QStringLiteral("Elm."));
    QCOMPARE(store.message_tree(ChatId{5}).size(), 4);
    QCOMPARE(store.siblings(MessageId{53}),
             std::optional<Siblings>(Siblings{{MessageId{52}, MessageId{53}}, 1}));
    ChatSettings settings;
    settings.temperature = 0.25;
    QCOMPARE(store.chat_settings(ChatId{5}), std::optional<ChatSettings>(settings));
    QVERIFY(store.restore_branch(MessageId{54}));
    QCOMPARE(store.message(MessageId{54})->text, QStringLiteral("Ash."));
    QCOMPARE(store.search(QStringLiteral("Oak or")).size(), 1);

    // The upgraded chat takes tool calls and results.
    QVERIFY(store.select_message(MessageId{53}));
    QVERIFY(store.set_tool_calls(MessageId{53}, {kWeather}));
    const auto result = store.append_tool_result(
        ChatId{5}, {kWeather.id, kWeather.name, ToolStatus::Cancelled}, QStringLiteral("-"));
    QVERIFY2(result, qPrintable(store.error_string()));
    QCOMPARE(store.current_path(ChatId{5}).last().role, Role::Tool);
    store.close();

    RawDatabase raw(this->path());
    QCOMPARE(raw.value(QStringLiteral("PRAGMA user_version")).toInt(), ChatStore::schema_version());
    QCOMPARE(raw.value(QStringLiteral("SELECT COUNT(*) FROM pragma_foreign_key_check")).toInt(), 0);
    const QString table =
        raw.value(QStringLiteral("SELECT sql FROM sqlite_master WHERE name = 'messages'"))
            .toString();
    QVERIFY2(!table.contains(QStringLiteral("messages_v")), qPrintable(table));
  }
};

QUIRE_TEST(ToolMessagesTest)
#include "test_tool_messages.moc"
