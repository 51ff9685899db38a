// The registry of several MCP servers (ToolServers): settings checked before
// anything changes, servers started only when asked, function names unique
// across servers and each call routed to its server, against the official
// SDK's test server (tests/reference/mcp_test_server.mjs).

#include <QJsonArray>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTest>

#include "mcp_test_support.h"
#include "quire/tools/tool_servers.h"
#include "test_main.h"

using namespace quire::tools;
using namespace quire::tools::test;

class ToolServersTest : public QObject {
  Q_OBJECT

 private slots:
  void registryNamesAndRoutes() {
    REQUIRE_NODE();
    ToolServers servers;
    ToolServerConfig disabled = stdio_server(QStringLiteral("off"));
    disabled.enabled = false;
    // Invalid settings change nothing.
    QVERIFY(
        !servers
             .setServers({stdio_server(QStringLiteral("one")), stdio_server(QStringLiteral("One"))})
             .isEmpty());
    QVERIFY(servers.servers().isEmpty());
    QVERIFY(servers
                .setServers({stdio_server(QStringLiteral("one")),
                             stdio_server(QStringLiteral("two")), disabled})
                .isEmpty());
    QSignalSpy states(&servers, &ToolServers::serverStateChanged);
    QSignalSpy tools_changed(&servers, &ToolServers::toolsChanged);
    // Nothing starts by itself.
    QTest::qWait(200);
    QCOMPARE(servers.state(QStringLiteral("one")), McpClient::State::Stopped);
    servers.startEnabled();
    QVERIFY(wait_ready(*servers.client(QStringLiteral("one"))));
    QVERIFY(wait_ready(*servers.client(QStringLiteral("two"))));
    QCOMPARE(servers.state(QStringLiteral("off")), McpClient::State::Stopped);
    QVERIFY(states.count() >= 4);
    QVERIFY(tools_changed.count() >= 1);

    // Both offer the same tools: every name is prefixed.
    const QJsonArray definitions = servers.functionDefinitions();
    QCOMPARE(definitions.size(), 2 * kSdkTools.size());
    const QJsonObject first = definitions[0].toObject();
    QCOMPARE(first.value(QStringLiteral("type")).toString(), QStringLiteral("function"));
    const QJsonObject function = first.value(QStringLiteral("function")).toObject();
    QCOMPARE(function.value(QStringLiteral("name")).toString(), QStringLiteral("one__echo"));
    QCOMPARE(function.value(QStringLiteral("description")).toString(),
             QStringLiteral("Returns its text"));
    QCOMPARE(function.value(QStringLiteral("parameters"))
                 .toObject()
                 .value(QStringLiteral("type"))
                 .toString(),
             QStringLiteral("object"));
    const std::optional<ToolFunction> two_echo = servers.function(QStringLiteral("two__echo"));
    QVERIFY(two_echo);
    QCOMPARE(two_echo->server, QStringLiteral("two"));
    QCOMPARE(two_echo->tool.name, QStringLiteral("echo"));

    auto call = [&](const QString& name, const QString& arguments) {
      std::unique_ptr<ToolCall> handle(servers.call(name, arguments));
      QSignalSpy spy(handle.get(), &ToolCall::finished);
      (void)wait_finished(handle.get());
      QTest::qWait(20);
      if (spy.count() != 1) qWarning("finished() %d times", static_cast<int>(spy.count()));
      return std::make_pair(handle->result(), handle->serverName());
    };
    auto [echoed, server] =
        call(QStringLiteral("two__echo"), QStringLiteral(R"({"text":"via two"})"));
    QCOMPARE(echoed.text, QStringLiteral("via two"));
    QCOMPARE(server, QStringLiteral("two"));

    // A tool only one server has keeps its own name.
    QCOMPARE(
        call(QStringLiteral("one__add_tool"), QStringLiteral(R"({"name":"only_one"})")).first.text,
        QStringLiteral("added only_one"));
    QVERIFY(QTest::qWaitFor(
        [&] { return servers.function(QStringLiteral("only_one")).has_value(); }, 10000));
    QCOMPARE(servers.function(QStringLiteral("only_one"))->server, QStringLiteral("one"));
    QCOMPARE(call(QStringLiteral("only_one"), QStringLiteral(R"({"text":"mine"})")).first.text,
             QStringLiteral("mine"));

    // What the model gets wrong fails the call, with a reason it can read.
    ToolCallResult r = call(QStringLiteral("no_such_tool"), {}).first;
    QCOMPARE(r.outcome, ToolCallOutcome::Failed);
    QCOMPARE(r.text, QStringLiteral("There is no tool \"no_such_tool\"."));
    r = call(QStringLiteral("one__echo"), QStringLiteral("{not json")).first;
    QVERIFY2(r.text.startsWith(QStringLiteral("The arguments of \"one__echo\" are not JSON")),
             qPrintable(r.text));
    r = call(QStringLiteral("one__echo"), QStringLiteral("[1]")).first;
    QCOMPARE(r.text, QStringLiteral("The arguments of \"one__echo\" are not a JSON object."));

    // One server crashes: its tools go, the other's stay and work, and it starts again.
    r = call(QStringLiteral("one__crash"), {}).first;
    QCOMPARE(r.outcome, ToolCallOutcome::Failed);
    QCOMPARE(servers.state(QStringLiteral("one")), McpClient::State::Failed);
    QVERIFY(
        servers.errorString(QStringLiteral("one")).contains(QStringLiteral("exited with code 3")));
    QVERIFY(!servers.function(QStringLiteral("one__echo")));
    // "echo" is now only two's.
    QCOMPARE(call(QStringLiteral("echo"), QStringLiteral(R"({"text":"still here"})")).first.text,
             QStringLiteral("still here"));
    QVERIFY(servers.start(QStringLiteral("one")));
    QVERIFY(wait_ready(*servers.client(QStringLiteral("one"))));
    QCOMPARE(call(QStringLiteral("one__echo"), QStringLiteral(R"({"text":"again"})")).first.text,
             QStringLiteral("again"));

    // Changed settings restart that server; removed servers stop.
    ToolServerConfig changed =
        stdio_server(QStringLiteral("two"), {QStringLiteral("--page-size"), QStringLiteral("4")});
    QVERIFY(servers.setServers({changed}).isEmpty());
    QVERIFY(wait_ready(*servers.client(QStringLiteral("two"))));
    QCOMPARE(servers.client(QStringLiteral("one")), nullptr);
    QCOMPARE(servers.functions().size(), kSdkTools.size());
    QCOMPARE(servers.functions().at(0).function_name, QStringLiteral("echo"));
    servers.stopAll();
    QVERIFY(QTest::qWaitFor(
        [&] { return servers.state(QStringLiteral("two")) == McpClient::State::Stopped; }, 10000));
    QVERIFY(servers.functions().isEmpty());
  }
};

QUIRE_TEST(ToolServersTest)
#include "test_tool_servers.moc"
