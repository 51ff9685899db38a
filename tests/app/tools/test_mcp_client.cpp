// Quire's MCP client against servers built on the official MCP TypeScript
// SDK (tests/reference/mcp_test_server.mjs, over stdio and Streamable HTTP)
// and against one that misbehaves (mcp_garbage_server.mjs): the lifecycle,
// tools/list with pages and list_changed, tool calls with every kind of
// result, timeouts and cancellation the server sees, results cut to a limit,
// a server that crashes mid-call, and garbage that fails the connection with
// a message naming the server. The registry of several servers is
// test_tool_servers.cpp's.

#include <signal.h>

#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTest>
#include <memory>

#include "mcp_test_support.h"
#include "quire/tools/mcp_client.h"
#include "quire/tools/mcp_transport.h"
#include "test_main.h"

using namespace quire::tools;
using namespace quire::tools::test;

namespace {

// Runs one call to its end; checks finished() came exactly once.
ToolCallResult run(McpClient& client, const QString& tool, const QJsonObject& arguments = {}) {
  std::unique_ptr<ToolCall> call(client.callTool(tool, arguments));
  QSignalSpy spy(call.get(), &ToolCall::finished);
  if (!wait_finished(call.get(), 60000)) {
    ToolCallResult none;
    none.error = QStringLiteral("the call did not finish");
    return none;
  }
  QTest::qWait(20);
  if (spy.count() != 1) qWarning("finished() was emitted %d times", static_cast<int>(spy.count()));
  ToolCallResult result = call->result();
  if (spy.count() != 1) result.error = QStringLiteral("finished() more than once");
  return result;
}

QStringList names_of(const QList<McpTool>& tools) {
  QStringList names;
  for (const McpTool& tool : tools)
    names << tool.name;
  return names;
}

// What the SDK server saw (the stats tool).
QJsonObject server_stats(McpClient& client) {
  return run(client, QStringLiteral("stats")).structured_content.toObject();
}

}  // namespace

class McpClientTest : public QObject {
  Q_OBJECT

  // The checks both transports pass.
  void basicSession(McpClient& client) {
    QSignalSpy ready(&client, &McpClient::ready);
    QSignalSpy tools_changed(&client, &McpClient::toolsChanged);
    client.start();
    QCOMPARE(client.state(), McpClient::State::Connecting);
    QVERIFY(wait_ready(client));
    QCOMPARE(ready.count(), 1);
    QCOMPARE(tools_changed.count(), 1);
    QCOMPARE(client.protocolVersion(), QStringLiteral("2025-06-18"));
    QCOMPARE(client.serverName(), QStringLiteral("quire-test-server"));
    QCOMPARE(names_of(client.tools()), kSdkTools);
    const McpTool echo = client.tools().at(0);
    QCOMPARE(echo.title, QStringLiteral("Echo"));
    QCOMPARE(echo.description, QStringLiteral("Returns its text"));
    QVERIFY(echo.read_only_hint);
    QCOMPARE(echo.input_schema.value(QStringLiteral("required")).toArray().at(0).toString(),
             QStringLiteral("text"));

    ToolCallResult r =
        run(client, QStringLiteral("echo"), {{QStringLiteral("text"), QStringLiteral("héllo")}});
    QCOMPARE(r.outcome, ToolCallOutcome::Finished);
    QVERIFY(!r.is_error);
    QCOMPARE(r.text, QStringLiteral("héllo"));
    QVERIFY2(r.summary.contains(QStringLiteral("1 line")), qPrintable(r.summary));

    r = run(client, QStringLiteral("add"), {{QStringLiteral("a"), 2}, {QStringLiteral("b"), 40.5}});
    QCOMPARE(r.outcome, ToolCallOutcome::Finished);
    QCOMPARE(r.text, QStringLiteral("42.5"));
    QCOMPARE(r.structured_content.toObject().value(QStringLiteral("sum")).toDouble(), 42.5);

    r = run(client, QStringLiteral("fail"));
    QCOMPARE(r.outcome, ToolCallOutcome::Finished);
    QVERIFY(r.is_error);
    QCOMPARE(r.text, QStringLiteral("the tool failed on purpose"));
    QVERIFY2(r.summary.startsWith(QStringLiteral("The tool reported an error")),
             qPrintable(r.summary));

    r = run(client, QStringLiteral("throw"),
            {{QStringLiteral("message"), QStringLiteral("kaboom")}});
    QCOMPARE(r.outcome, ToolCallOutcome::Finished);
    QVERIFY(r.is_error);
    QVERIFY2(r.text.contains(QStringLiteral("kaboom")), qPrintable(r.text));

    // Arguments the tool's schema refuses: the SDK answers isError.
    r = run(client, QStringLiteral("add"), {{QStringLiteral("a"), QStringLiteral("two")}});
    QVERIFY(r.is_error);

    r = run(client, QStringLiteral("media"));
    QCOMPARE(r.outcome, ToolCallOutcome::Finished);
    QVERIFY2(r.text.contains(QStringLiteral("[image: image/png, 16 bytes]")), qPrintable(r.text));
    QVERIFY(r.text.contains(QStringLiteral("[audio: audio/wav, 8 bytes]")));
    QVERIFY(r.text.contains(
        QStringLiteral("[resource link: report.txt <file:///tmp/report.txt>, text/plain]")));
    QVERIFY(r.text.contains(QStringLiteral("embedded notes")));
    QVERIFY(r.text.contains(
        QStringLiteral("[resource: file:///tmp/blob.bin, application/octet-stream, 3 bytes]")));

    // A tool the server does not have fails here, without a request.
    r = run(client, QStringLiteral("nope"));
    QCOMPARE(r.outcome, ToolCallOutcome::Failed);
    QVERIFY(r.error.contains(QStringLiteral("has no tool \"nope\"")));
  }

  // A call that outlives its timeout: notifications/cancelled reaches the server.
  void timeoutSendsCancelled(McpClient& client) {
    const int before = server_stats(client).value(QStringLiteral("cancelled")).toInt();
    const ToolCallResult r = run(client, QStringLiteral("sleep"), {{QStringLiteral("ms"), 20000}});
    QCOMPARE(r.outcome, ToolCallOutcome::TimedOut);
    QVERIFY(r.is_error);
    QVERIFY2(r.error.contains(QStringLiteral("timed out after 1.5 s")), qPrintable(r.error));
    QVERIFY(r.error.contains(QStringLiteral("\"sleep\"")));
    QVERIFY(r.seconds >= 1.4 && r.seconds < 10);
    QVERIFY(QTest::qWaitFor(
        [&] {
          return server_stats(client).value(QStringLiteral("cancelled")).toInt() == before + 1;
        },
        10000));
    QCOMPARE(server_stats(client).value(QStringLiteral("lastCancelReason")).toString(),
             QStringLiteral("timed out after 1.5 s"));
    // The late answer (the SDK drops it, but one could come) changes nothing.
    QCOMPARE(client.state(), McpClient::State::Ready);
  }

  void callerCancels(McpClient& client) {
    const int before = server_stats(client).value(QStringLiteral("cancelled")).toInt();
    std::unique_ptr<ToolCall> call(
        client.callTool(QStringLiteral("sleep"), {{QStringLiteral("ms"), 20000}}));
    QSignalSpy spy(call.get(), &ToolCall::finished);
    QTest::qWait(300);
    QVERIFY(!call->isFinished());
    call->cancel(QStringLiteral("the user said no"));
    QVERIFY(call->isFinished());
    QCOMPARE(call->result().outcome, ToolCallOutcome::Cancelled);
    QVERIFY(call->result().is_error);
    call->cancel();  // twice: nothing more
    QTest::qWait(50);
    QCOMPARE(spy.count(), 1);
    QVERIFY(QTest::qWaitFor(
        [&] {
          return server_stats(client).value(QStringLiteral("cancelled")).toInt() == before + 1;
        },
        10000));
    QCOMPARE(server_stats(client).value(QStringLiteral("lastCancelReason")).toString(),
             QStringLiteral("the user said no"));
    // Deleting a call in flight cancels it too.
    ToolCall* dropped = client.callTool(QStringLiteral("sleep"), {{QStringLiteral("ms"), 20000}});
    QTest::qWait(300);
    delete dropped;
    QVERIFY(QTest::qWaitFor(
        [&] {
          return server_stats(client).value(QStringLiteral("cancelled")).toInt() == before + 2;
        },
        10000));
  }

  void listChanged(McpClient& client) {
    QSignalSpy changed(&client, &McpClient::toolsChanged);
    const ToolCallResult r = run(client, QStringLiteral("add_tool"),
                                 {{QStringLiteral("name"), QStringLiteral("shout")}});
    QCOMPARE(r.text, QStringLiteral("added shout"));
    QVERIFY(QTest::qWaitFor(
        [&] { return names_of(client.tools()).contains(QStringLiteral("shout")); }, 10000));
    QVERIFY(changed.count() >= 1);
    QCOMPARE(
        run(client, QStringLiteral("shout"), {{QStringLiteral("text"), QStringLiteral("HI")}}).text,
        QStringLiteral("HI"));
  }

 private slots:
  void stdioSession() {
    REQUIRE_NODE();
    ToolServerConfig config = stdio_server(QStringLiteral("sdk"));
    config.call_timeout_ms = 1500;
    McpClient client(config);
    basicSession(client);
    QVERIFY(client.processId() > 0);
    timeoutSendsCancelled(client);
    callerCancels(client);
    listChanged(client);

    // Stopping closes stdin; the SDK server exits by itself.
    QSignalSpy stopped(&client, &McpClient::stopped);
    client.stop();
    QCOMPARE(client.state(), McpClient::State::Stopping);
    QVERIFY(stopped.wait(10000));
    QCOMPARE(client.state(), McpClient::State::Stopped);
    QCOMPARE(run(client, QStringLiteral("echo")).outcome, ToolCallOutcome::Failed);
  }

  void httpSession() {
    REQUIRE_NODE();
    HttpServer server;
    QString error;
    QVERIFY2(server.start(&error), qPrintable(error));
    ToolServerConfig config = server.config(QStringLiteral("sdk-http"));
    config.call_timeout_ms = 1500;
    McpClient client(config);
    basicSession(client);
    auto* transport = qobject_cast<McpHttpTransport*>(client.transport());
    QVERIFY(transport != nullptr);
    QVERIFY(!transport->sessionId().isEmpty());
    const QString session = transport->sessionId();
    // The user's headers go with every request.
    QVERIFY2(
        server.log().contains(QStringLiteral("initialize with authorization: Bearer test-token")),
        qPrintable(server.log()));
    timeoutSendsCancelled(client);
    callerCancels(client);
    // list_changed arrives in the event stream of the add_tool call.
    listChanged(client);
    // The SDK's own list_changed comes in the GET event stream.
    QVERIFY(transport->eventStreamOpen());
    QCOMPARE(
        run(client, QStringLiteral("add_tool"),
            {{QStringLiteral("name"), QStringLiteral("whisper")}, {QStringLiteral("quiet"), true}})
            .text,
        QStringLiteral("added whisper"));
    QVERIFY(QTest::qWaitFor(
        [&] { return names_of(client.tools()).contains(QStringLiteral("whisper")); }, 10000));

    // The server ends the session: the next call fails, and a new session starts.
    QCOMPARE(run(client, QStringLiteral("end_session")).text, QStringLiteral("ending the session"));
    QTest::qWait(300);
    const ToolCallResult lost =
        run(client, QStringLiteral("echo"), {{QStringLiteral("text"), QStringLiteral("x")}});
    QCOMPARE(lost.outcome, ToolCallOutcome::Failed);
    QVERIFY2(
        lost.error.contains(QStringLiteral("ended the session (HTTP 404 from http://127.0.0.1:")),
        qPrintable(lost.error));
    QVERIFY(lost.error.contains(QStringLiteral("a new session is started")));
    QVERIFY(wait_ready(client));
    transport = qobject_cast<McpHttpTransport*>(client.transport());
    QVERIFY(transport != nullptr);
    const QString second = transport->sessionId();
    QVERIFY(!second.isEmpty() && second != session);
    QCOMPARE(
        run(client, QStringLiteral("echo"), {{QStringLiteral("text"), QStringLiteral("again")}})
            .text,
        QStringLiteral("again"));

    QSignalSpy stopped(&client, &McpClient::stopped);
    client.stop();
    QVERIFY(stopped.wait(10000));
    QVERIFY(QTest::qWaitFor(
        [&] { return server.log().contains(QStringLiteral("session deleted ") + second); }, 5000));
  }

  // A server that answers each POST with one JSON body, not an event stream.
  void httpJsonAnswers() {
    REQUIRE_NODE();
    HttpServer server;
    QString error;
    QVERIFY2(server.start(&error, {QStringLiteral("--json")}), qPrintable(error));
    McpClient client(server.config(QStringLiteral("sdk-json")));
    client.start();
    QVERIFY(wait_ready(client));
    QCOMPARE(names_of(client.tools()), kSdkTools);
    QCOMPARE(
        run(client, QStringLiteral("echo"), {{QStringLiteral("text"), QStringLiteral("plain")}})
            .text,
        QStringLiteral("plain"));
    const ToolCallResult r =
        run(client, QStringLiteral("add"), {{QStringLiteral("a"), 1}, {QStringLiteral("b"), 2}});
    QCOMPARE(r.structured_content.toObject().value(QStringLiteral("sum")).toInt(), 3);
  }

  // A server that ignores both the end of its stdin and SIGTERM is killed.
  void stopEscalatesToKill() {
    REQUIRE_NODE();
    ToolServerConfig stubborn;
    stubborn.name = QStringLiteral("stubborn");
    stubborn.command = QStringLiteral(QUIRE_NODE);
    stubborn.arguments = {
        QStringLiteral("-e"),
        QStringLiteral("process.on('SIGTERM', () => {}); process.stdin.resume(); "
                       "process.stdin.on('end', () => {}); setInterval(() => {}, 1000);")};
    McpClient client(stubborn);
    client.start();
    QTest::qWait(500);
    QCOMPARE(client.state(), McpClient::State::Connecting);
    const qint64 pid = client.processId();
    QVERIFY(pid > 0);
    QSignalSpy stopped(&client, &McpClient::stopped);
    QElapsedTimer clock;
    clock.start();
    client.stop();
    QVERIFY(stopped.wait(15000));
    // Coarse timers may fire up to 5 % early.
    QVERIFY2(clock.elapsed() >=
                 (McpStdioTransport::kCloseGraceMs + McpStdioTransport::kTerminateGraceMs) * 9 / 10,
             qPrintable(QString::number(clock.elapsed())));
    QCOMPARE(client.state(), McpClient::State::Stopped);
    // Reaped: no such process any more.
    QCOMPARE(::kill(static_cast<pid_t>(pid), 0), -1);
  }

  void paginatedList() {
    REQUIRE_NODE();
    McpClient client(stdio_server(QStringLiteral("pages"),
                                  {QStringLiteral("--page-size"), QStringLiteral("3")}));
    client.start();
    QVERIFY(wait_ready(client));
    QCOMPARE(names_of(client.tools()), kSdkTools);
  }

  void cutsLargeResults() {
    REQUIRE_NODE();
    ToolServerConfig config = stdio_server(QStringLiteral("big"));
    McpClient client(config);
    client.start();
    QVERIFY(wait_ready(client));
    const qint64 size = 3 * 1024 * 1024;
    ToolCallResult r =
        run(client, QStringLiteral("big"), {{QStringLiteral("bytes"), static_cast<double>(size)}});
    QCOMPARE(r.outcome, ToolCallOutcome::Finished);
    QCOMPARE(r.full_bytes, size);
    QCOMPARE(r.cut_bytes, size - ToolServerConfig::kDefaultMaxResultBytes);
    QVERIFY(r.text.size() < ToolServerConfig::kDefaultMaxResultBytes + 200);
    QVERIFY2(r.text.endsWith(
                 QStringLiteral("[... 2097152 more bytes cut: the result had 3145728 bytes]")),
             qPrintable(r.text.right(100)));
    QVERIFY2(r.summary.contains(QStringLiteral("cut to 1024 KiB")), qPrintable(r.summary));
    // Below the limit nothing is cut.
    r = run(client, QStringLiteral("big"), {{QStringLiteral("bytes"), 1000}});
    QCOMPARE(r.cut_bytes, 0);
    QCOMPARE(r.text.size(), 1000);
  }

  void largeResultsOverHttp() {
    REQUIRE_NODE();
    HttpServer server;
    QString error;
    QVERIFY2(server.start(&error), qPrintable(error));
    ToolServerConfig config = server.config(QStringLiteral("big-http"));
    config.max_result_bytes = 4096;
    McpClient client(config);
    client.start();
    QVERIFY(wait_ready(client));
    const ToolCallResult r =
        run(client, QStringLiteral("big"), {{QStringLiteral("bytes"), 2 * 1024 * 1024}});
    QCOMPARE(r.outcome, ToolCallOutcome::Finished);
    QCOMPARE(r.cut_bytes, 2 * 1024 * 1024 - 4096);
    // An event past the decoder's line limit fails that call, not the connection.
    const ToolCallResult huge =
        run(client, QStringLiteral("big"), {{QStringLiteral("bytes"), 9 * 1024 * 1024}});
    QCOMPARE(huge.outcome, ToolCallOutcome::Failed);
    QVERIFY2(huge.error.contains(QStringLiteral("the server sent an event longer than 8 MiB")),
             qPrintable(huge.error));
    QCOMPARE(client.state(), McpClient::State::Ready);
    QCOMPARE(run(client, QStringLiteral("echo"), {{QStringLiteral("text"), QStringLiteral("fine")}})
                 .text,
             QStringLiteral("fine"));
  }

  void crashMidCall() {
    REQUIRE_NODE();
    McpClient client(stdio_server(QStringLiteral("crashy")));
    client.start();
    QVERIFY(wait_ready(client));
    QSignalSpy failed(&client, &McpClient::failed);
    std::unique_ptr<ToolCall> other(
        client.callTool(QStringLiteral("sleep"), {{QStringLiteral("ms"), 10000}}));
    const ToolCallResult r = run(client, QStringLiteral("crash"), {{QStringLiteral("code"), 3}});
    QCOMPARE(r.outcome, ToolCallOutcome::Failed);
    QVERIFY2(r.error.contains(QStringLiteral("Tool server \"crashy\"")), qPrintable(r.error));
    QVERIFY2(r.error.contains(QStringLiteral("exited with code 3")), qPrintable(r.error));
    QVERIFY2(r.error.contains(QStringLiteral("crashing on purpose")), qPrintable(r.error));
    QCOMPARE(client.state(), McpClient::State::Failed);
    QCOMPARE(failed.count(), 1);
    QCOMPARE(client.errorString(), r.error);
    // The other call in flight ends too, once.
    QVERIFY(other->isFinished());
    QCOMPARE(other->result().outcome, ToolCallOutcome::Failed);
    // Started again, it works.
    client.start();
    QVERIFY(wait_ready(client));
    QCOMPARE(run(client, QStringLiteral("echo"), {{QStringLiteral("text"), QStringLiteral("back")}})
                 .text,
             QStringLiteral("back"));
  }

  void garbageFailsClearly_data() {
    QTest::addColumn<QString>("mode");
    QTest::addColumn<QString>("expected");
    QTest::newRow("not JSON")
        << "not-json"
        << "sent a message that is not MCP: not JSON: \"Hello! I am not JSON at all\"";
    QTest::newRow("not JSON-RPC") << "not-jsonrpc"
                                  << "not JSON-RPC 2.0: the \"jsonrpc\" member is missing";
    QTest::newRow("unknown id") << "unknown-id"
                                << "answered a request that was never sent (id 999)";
    QTest::newRow("old version") << "old-version"
                                 << "speaks MCP revision \"2023-01-01\", which Quire does not (it "
                                    "knows 2025-06-18, 2025-03-26, 2024-11-05)";
    QTest::newRow("silent") << "silent"
                            << "did not answer initialize within 1.5 s";
    QTest::newRow("exits") << "exit"
                           << "exited with code 7; its last words on stderr: garbage server: "
                              "giving up before anything";
  }

  void garbageFailsClearly() {
    REQUIRE_NODE();
    QFETCH(QString, mode);
    QFETCH(QString, expected);
    ToolServerConfig config = garbage_server(QStringLiteral("junk"), mode);
    config.connect_timeout_ms = 1500;
    McpClient client(config);
    QSignalSpy failed(&client, &McpClient::failed);
    client.start();
    QVERIFY(!wait_ready(client, 20000));
    QCOMPARE(client.state(), McpClient::State::Failed);
    QCOMPARE(failed.count(), 1);
    QVERIFY2(client.errorString().startsWith(QStringLiteral("Tool server \"junk\" ")),
             qPrintable(client.errorString()));
    QVERIFY2(client.errorString().contains(expected), qPrintable(client.errorString()));
    // No process is left behind, and nothing more happens.
    QTest::qWait(100);
    QCOMPARE(failed.count(), 1);
  }

  void errorResponses() {
    REQUIRE_NODE();
    McpClient client(garbage_server(QStringLiteral("strict"), QStringLiteral("error")));
    client.start();
    QVERIFY(wait_ready(client));
    const ToolCallResult r = run(client, QStringLiteral("echo"));
    QCOMPARE(r.outcome, ToolCallOutcome::Failed);
    QVERIFY2(r.error.contains(
                 QStringLiteral("the server answered error -32602: bad arguments, on purpose")),
             qPrintable(r.error));
    QCOMPARE(client.state(), McpClient::State::Ready);
  }

  void answersServerRequests() {
    REQUIRE_NODE();
    McpClient client(garbage_server(QStringLiteral("asker"), QStringLiteral("ping")));
    client.start();
    QVERIFY(wait_ready(client));
    const ToolCallResult r = run(client, QStringLiteral("echo"));
    QCOMPARE(r.outcome, ToolCallOutcome::Finished);
    const QJsonArray answers = QJsonDocument::fromJson(r.text.toUtf8()).array();
    QCOMPARE(answers.size(), 2);
    QCOMPARE(answers[0].toObject().value(QStringLiteral("id")).toString(), QStringLiteral("p1"));
    QVERIFY(answers[0].toObject().value(QStringLiteral("result")).isObject());
    QCOMPARE(answers[1]
                 .toObject()
                 .value(QStringLiteral("error"))
                 .toObject()
                 .value(QStringLiteral("code"))
                 .toInt(),
             -32601);
  }

  void unreachableServers() {
    REQUIRE_NODE();
    ToolServerConfig missing;
    missing.name = QStringLiteral("ghost");
    missing.command = QStringLiteral("/nonexistent/quire-mcp-server");
    McpClient ghost(missing);
    ghost.start();
    QVERIFY(!wait_ready(ghost, 10000));
    QVERIFY2(ghost.errorString().contains(QStringLiteral(
                 "Tool server \"ghost\" could not start \"/nonexistent/quire-mcp-server\"")),
             qPrintable(ghost.errorString()));

    ToolServerConfig nowhere;
    nowhere.name = QStringLiteral("nowhere");
    nowhere.transport = ToolTransport::Http;
    nowhere.url = QUrl(QStringLiteral("http://127.0.0.1:1/mcp"));
    McpClient refused(nowhere);
    refused.start();
    QVERIFY(!wait_ready(refused, 10000));
    QVERIFY2(refused.errorString().contains(
                 QStringLiteral("could not initialize: could not reach http://127.0.0.1:1/mcp")),
             qPrintable(refused.errorString()));

    ToolServerConfig invalid;
    invalid.name = QStringLiteral("empty");
    McpClient empty(invalid);
    empty.start();
    QVERIFY(!wait_ready(empty, 5000));
    QVERIFY2(empty.errorString().contains(QStringLiteral("The command is empty")),
             qPrintable(empty.errorString()));
  }
};

QUIRE_TEST(McpClientTest)
#include "test_mcp_client.moc"
