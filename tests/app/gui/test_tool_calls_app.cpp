// The desktop program running tools: a tool server the user configured (the
// official MCP SDK's, started from tool-servers.json), a model with Qwen3's
// real tokenizer and template (random weights, nudged by a bias to open a
// call; the grammar then holds the call to the tool's schema), a card that
// waits for the user, and the chat going on from the result. Allow once,
// Deny, and Always allow (after which the tool runs without asking); a tool
// that fails is a result like any other; everything stays with the chat
// across a restart.

#include <QDir>
#include <QDockWidget>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QTest>
#include <algorithm>

#include "app_test_support.h"
#include "chat_controller.h"
#include "chat_tool_calls.h"
#include "main_window.h"
#include "quire/engine/tokenizer/tokenizer.h"
#include "quire/ui/chat_view.h"
#include "quire/ui/tool_servers_panel.h"
#include "test_main.h"

using namespace quire;
using namespace quire::test;

namespace quire::test::tool_calls_app {

QString tools_model() {
  return published_family_model(QStringLiteral("Qwen3-8B-tools"), "qwen3-8b.json",
                                "tokenizer-qwen3");
}

// Settings → Tools as the user would leave it: one stdio server, the SDK's
// test server offering only `tools`.
void write_tool_servers(const QString& data_dir, const QString& tools) {
  QJsonObject server{
      {QStringLiteral("name"), QStringLiteral("test")},
      {QStringLiteral("transport"), QStringLiteral("stdio")},
      {QStringLiteral("command"), QStringLiteral(QUIRE_NODE)},
      {QStringLiteral("args"),
       QJsonArray{QDir(QStringLiteral(QUIRE_REFERENCE_DIR)).filePath("mcp_test_server.mjs"),
                  QStringLiteral("--stdio"), QStringLiteral("--only"), tools}}};
  QFile file(QDir(data_dir).filePath(QStringLiteral("tool-servers.json")));
  QVERIFY(file.open(QIODevice::WriteOnly));
  file.write(QJsonDocument(QJsonArray{server}).toJson());
}

// A bias on Qwen's <tool_call> makes the random model open a call as its
// first token (only for replies to the user: the reply after the results
// goes its own way).
void open_calls(AppRun& run, const QString& model) {
  const engine::Tokenizer tokenizer = engine::Tokenizer::load(model.toStdString());
  const qint32 opener = *tokenizer.find_piece("<tool_call>");
  run.adjust_request = [opener](gui::ReplyRequest& request) {
    if (request.history.constLast().role == store::Role::User)
      request.token_bias.insert(opener, 1.0e4);
  };
}

bool server_ready(AppRun& run) {
  ui::ToolServersPanel& panel = *run.app->window().toolServersPanel();
  return QTest::qWaitFor(
      [&] {
        return panel.status(QStringLiteral("test")).state ==
               ui::ToolServerStatusView::State::Connected;
      },
      30'000);
}

// Starts the program on `run` (shown, so that the cards' buttons are
// visible) and waits for the model and the tool server.
bool start_with_tools(AppRun& run) {
  run.start();
  run.app->show();
  return run.waitForModel() && server_ready(run);
}

// The card's decision button of the newest reply's first call.
QPushButton* decision(AppRun& run, const char* name) {
  const QList<QPushButton*> buttons =
      run.app->window().chatView()->findChildren<QPushButton*>(QString::fromLatin1(name));
  for (auto it = buttons.crbegin(); it != buttons.crend(); ++it) {
    if ((*it)->isVisible() && (*it)->isEnabled()) return *it;
  }
  return nullptr;
}

// The chat's current path, as the store keeps it.
QList<store::Message> path(AppRun& run) {
  const std::optional<store::ChatId> chat = run.app->chats().currentChat();
  return chat ? run.app->store().current_path(*chat) : QList<store::Message>{};
}

}  // namespace quire::test::tool_calls_app

using namespace quire::test::tool_calls_app;

class ToolCallsAppTest : public QObject {
  Q_OBJECT

 private slots:
  void aCallWaitsForTheUserAndTheChatGoesOn() {
    const QString model = tools_model();
    AppRun run(model, 40);
    write_tool_servers(run.data.path(), QStringLiteral("stats"));
    open_calls(run, model);
    QVERIFY2(start_with_tools(run), "the model or the tool server did not start");

    // The reply is a call; it waits for the user.
    const std::optional<store::GenerationStats> asked = run.send(QStringLiteral("Any stats?"));
    QVERIFY(asked);
    QList<store::Message> messages = path(run);
    QCOMPARE(messages.size(), 2);
    QCOMPARE(messages[1].tool_calls.size(), 1);
    QCOMPARE(messages[1].tool_calls[0].name, QStringLiteral("stats"));
    QCOMPARE(messages[1].tool_calls[0].server, QStringLiteral("test"));
    // The grammar allows a space or a line break inside an empty object.
    QVERIFY(
        QJsonDocument::fromJson(messages[1].tool_calls[0].arguments.toUtf8()).object().isEmpty());
    QTRY_VERIFY(decision(run, "allowOnceButton") != nullptr);

    // Allow once: the tool runs, its result is stored, and the model answers it.
    QSignalSpy finished(&run.app->chats(), &gui::ChatController::replyFinished);
    decision(run, "allowOnceButton")->click();
    QVERIFY(finished.wait(60'000));
    messages = path(run);
    QCOMPARE(messages.size(), 4);
    QCOMPARE(messages[2].role, store::Role::Tool);
    QVERIFY(messages[2].tool_result);
    QCOMPARE(messages[2].tool_result->status, store::ToolStatus::Allowed);
    QCOMPARE(messages[2].tool_result->call_id, messages[1].tool_calls[0].id);
    QVERIFY2(messages[2].text.contains(QStringLiteral("calls")), qPrintable(messages[2].text));
    QCOMPARE(messages[3].role, store::Role::Assistant);
    const auto after = finished.first().at(1).value<store::GenerationStats>();
    // The answer's prompt holds the call and its result, and its start (the
    // question and the call) came from the cache.
    QVERIFY(after.prompt_tokens > asked->prompt_tokens);
    QVERIFY2(after.cached_tokens >= asked->prompt_tokens,
             qPrintable(QStringLiteral("%1 cached of %2; the question's prompt was %3")
                            .arg(after.cached_tokens)
                            .arg(after.prompt_tokens)
                            .arg(asked->prompt_tokens)));

    // Deny: the model reads that the user declined, and answers that.
    QVERIFY(run.send(QStringLiteral("Again?")));
    QTRY_VERIFY(decision(run, "denyButton") != nullptr);
    finished.clear();
    decision(run, "denyButton")->click();
    QVERIFY(finished.wait(60'000));
    messages = path(run);
    QCOMPARE(messages.size(), 8);
    QCOMPARE(messages[6].tool_result->status, store::ToolStatus::Denied);
    QCOMPARE(messages[6].text, gui::ChatToolCalls::deniedText());

    // Always allow in this chat: this call runs, and so does the next one,
    // without asking.
    QVERIFY(run.send(QStringLiteral("Once more?")));
    QTRY_VERIFY(decision(run, "alwaysAllowButton") != nullptr);
    finished.clear();
    decision(run, "alwaysAllowButton")->click();
    QVERIFY(finished.wait(60'000));
    finished.clear();
    run.type(QStringLiteral("And now?"));
    // The call's reply, then the answer to its result.
    QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 2, 60'000);
    messages = path(run);
    QCOMPARE(messages.size(), 16);
    QCOMPARE(messages[14].tool_result->status, store::ToolStatus::Allowed);
    QCOMPARE(decision(run, "allowOnceButton"), nullptr);

    // Everything stays with the chat: after a restart the cards show what
    // happened to each call.
    const store::ChatId chat = *run.app->chats().currentChat();
    run.restart(40);
    QVERIFY(run.waitForModel());
    run.app->chats().openChat(chat);
    const QList<store::Message> restored = path(run);
    QCOMPARE(restored.size(), 16);
    QCOMPARE(restored[6].tool_result->status, store::ToolStatus::Denied);
    // One card per call, the denied one saying so.
    const QList<QLabel*> states =
        run.app->window().chatView()->findChildren<QLabel*>(QStringLiteral("toolCallState"));
    QCOMPARE(states.size(), 4);
    QCOMPARE(std::count_if(states.begin(), states.end(),
                           [](const QLabel* state) {
                             return state->text().startsWith(QStringLiteral("Denied"));
                           }),
             1);
  }

  void aFailingToolIsAResultAndTheChatGoesOn() {
    const QString model = tools_model();
    AppRun run(model, 40);
    write_tool_servers(run.data.path(), QStringLiteral("fail"));
    open_calls(run, model);
    QVERIFY2(start_with_tools(run), "the model or the tool server did not start");
    QVERIFY(run.send(QStringLiteral("Try it.")));
    QTRY_VERIFY(decision(run, "allowOnceButton") != nullptr);
    QSignalSpy finished(&run.app->chats(), &gui::ChatController::replyFinished);
    decision(run, "allowOnceButton")->click();
    QVERIFY(finished.wait(60'000));
    const QList<store::Message> messages = path(run);
    QCOMPARE(messages.size(), 4);
    QCOMPARE(messages[2].tool_result->status, store::ToolStatus::Allowed);
    QVERIFY2(messages[2].text.startsWith(QStringLiteral("The tool reported an error: ")),
             qPrintable(messages[2].text));
    QCOMPARE(messages[3].role, store::Role::Assistant);
  }

  // The README's picture (with QUIRE_SCREENSHOT_DIR): a call that ran, its
  // result and the answer, then a call waiting for the user.
  void aToolCallInTheChat() {
    const QString model = tools_model();
    AppRun run(model, 40);
    write_tool_servers(run.data.path(), QStringLiteral("stats"));
    open_calls(run, model);
    const auto opens = run.adjust_request;
    // Short answers after a result: random weights have nothing to say.
    run.adjust_request = [opens](gui::ReplyRequest& request) {
      opens(request);
      if (request.history.constLast().role == store::Role::Tool) request.max_new_tokens = 6;
    };
    run.start();
    gui::MainWindow& window = run.app->window();
    window.resize(1280, 860);
    window.memoryDock()->hide();
    run.app->show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QVERIFY(run.waitForModel());
    QVERIFY2(server_ready(run), "the tool server did not connect");
    QVERIFY(run.send(QStringLiteral("What has the tool server seen so far?")));
    QTRY_VERIFY(decision(run, "allowOnceButton") != nullptr);
    QSignalSpy finished(&run.app->chats(), &gui::ChatController::replyFinished);
    decision(run, "allowOnceButton")->click();
    QVERIFY(finished.wait(60'000));
    QVERIFY(run.send(QStringLiteral("And now?")));
    QTRY_VERIFY(decision(run, "allowOnceButton") != nullptr);
    QTest::qWait(200);
    keep_screenshot(window.grab().toImage(), "quire-tool-call.png");
    const QList<QLabel*> states =
        window.chatView()->findChildren<QLabel*>(QStringLiteral("toolCallState"));
    QCOMPARE(states.size(), 2);
  }

  // "Always allow" does not let a model that calls tools without end run on
  // alone: after a few rounds since the user's message, a call waits again.
  void alwaysAllowedCallsStopAfterSomeRounds() {
    const QString model = tools_model();
    AppRun run(model, 40);
    write_tool_servers(run.data.path(), QStringLiteral("stats"));
    open_calls(run, model);
    const auto opens = run.adjust_request;
    // Every reply opens a call, the ones after results too.
    run.adjust_request = [opens](gui::ReplyRequest& request) {
      const store::Role last = request.history.constLast().role;
      request.history.last().role = store::Role::User;
      opens(request);
      request.history.last().role = last;
    };
    QVERIFY2(start_with_tools(run), "the model or the tool server did not start");
    QVERIFY(run.send(QStringLiteral("Keep going.")));
    QTRY_VERIFY(decision(run, "alwaysAllowButton") != nullptr);
    decision(run, "alwaysAllowButton")->click();
    const int expected = gui::ChatToolCalls::kMaxRoundsAlone + 1;
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
          int calls = 0;
          for (const store::Message& message : path(run))
            calls += message.tool_calls.isEmpty() ? 0 : 1;
          return calls == expected && decision(run, "allowOnceButton") != nullptr;
        }(),
        120'000);
    int results = 0;
    for (const store::Message& message : path(run))
      results += message.role == store::Role::Tool ? 1 : 0;
    QCOMPARE(results, expected - 1);
  }

  // Chat settings turn tools off for one chat: its replies are offered none.
  void toolsAreOffInAChatThatSaysSo() {
    const QString model = tools_model();
    AppRun run(model, 8);
    write_tool_servers(run.data.path(), QStringLiteral("stats"));
    QList<QByteArray> offered;
    run.adjust_request = [&offered](gui::ReplyRequest& request) { offered.append(request.tools); };
    QVERIFY2(start_with_tools(run), "the model or the tool server did not start");
    QVERIFY(run.send(QStringLiteral("Hello")));
    QCOMPARE(offered.size(), 1);
    QVERIFY2(offered[0].contains("\"name\":\"stats\""), offered[0].constData());
    store::ChatSettings off;
    off.tools_enabled = false;
    QVERIFY(run.app->store().set_chat_settings(*run.app->chats().currentChat(), off));
    QVERIFY(run.send(QStringLiteral("And without tools?")));
    QCOMPARE(offered.size(), 2);
    QVERIFY(offered[1].isEmpty());
  }

  // A message sent while a call waits ends that call unrun: the
  // conversation stays whole and goes on from the new message.
  void aNewMessageSettlesWaitingCalls() {
    const QString model = tools_model();
    AppRun run(model, 40);
    write_tool_servers(run.data.path(), QStringLiteral("stats"));
    open_calls(run, model);
    QVERIFY2(start_with_tools(run), "the model or the tool server did not start");
    QVERIFY(run.send(QStringLiteral("Stats?")));
    QTRY_VERIFY(decision(run, "allowOnceButton") != nullptr);
    run.adjust_request = {};
    QVERIFY(run.send(QStringLiteral("Never mind.")));
    const QList<store::Message> messages = path(run);
    QCOMPARE(messages.size(), 5);
    QCOMPARE(messages[2].role, store::Role::Tool);
    QCOMPARE(messages[2].tool_result->status, store::ToolStatus::Cancelled);
    QCOMPARE(messages[3].role, store::Role::User);
    QCOMPARE(messages[4].role, store::Role::Assistant);
  }
};

QUIRE_TEST(ToolCallsAppTest)
#include "test_tool_calls_app.moc"
