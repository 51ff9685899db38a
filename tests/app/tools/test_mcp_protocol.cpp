// MCP's messages without a server: JSON-RPC messages classified and garbage
// refused with its reason, the answers to initialize, tools/list and
// tools/call read (every content kind described, long results cut), the
// function names unique across servers, and the servers' settings through
// JSON and validation.

#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>
#include <string>

#include "quire/tools/mcp_protocol.h"
#include "quire/tools/tool_server_config.h"
#include "test_main.h"

using namespace quire::tools;

namespace {

JsonRpcMessage one(std::string_view text) {
  const JsonRpcParse parse = parse_json_rpc(text);
  if (!parse.ok() || parse.messages.size() != 1) {
    qWarning("%s: %s", std::string(text).c_str(), parse.error.c_str());
    return {};
  }
  return parse.messages[0];
}

std::string refusal(std::string_view text) {
  return parse_json_rpc(text).error;
}

bool contains(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

class McpProtocolTest : public QObject {
  Q_OBJECT

 private slots:
  void classifiesMessages() {
    JsonRpcMessage m = one(R"({"jsonrpc":"2.0","id":7,"method":"ping"})");
    QCOMPARE(m.kind, JsonRpcKind::Request);
    QCOMPARE(m.id, std::string("7"));
    QCOMPARE(m.method, std::string("ping"));
    QVERIFY(m.params.empty());

    m = one(R"({"jsonrpc":"2.0","id":"a-1","method":"roots/list","params":{}})");
    QCOMPARE(m.kind, JsonRpcKind::Request);
    QCOMPARE(m.id, std::string("\"a-1\""));
    QCOMPARE(m.params, std::string("{}"));

    m = one(R"({"jsonrpc":"2.0","method":"notifications/tools/list_changed"})");
    QCOMPARE(m.kind, JsonRpcKind::Notification);
    QVERIFY(m.id.empty());

    m = one(R"({"result":{"tools":[]},"jsonrpc":"2.0","id":3})");
    QCOMPARE(m.kind, JsonRpcKind::Response);
    QCOMPARE(m.id, std::string("3"));
    QCOMPARE(m.result, std::string(R"({"tools":[]})"));

    m = one(R"({"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"bad","data":[1]}})");
    QCOMPARE(m.kind, JsonRpcKind::ErrorResponse);
    QCOMPARE(m.error_code, -32602);
    QCOMPARE(m.error_message, std::string("bad"));
    QCOMPARE(m.error_data, std::string("[1]"));

    m = one(R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}})");
    QCOMPARE(m.kind, JsonRpcKind::ErrorResponse);
    QCOMPARE(m.id, std::string("null"));

    const JsonRpcParse batch = parse_json_rpc(
        R"([{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}])");
    QVERIFY(batch.ok());
    QCOMPARE(batch.messages.size(), std::size_t{2});
    QCOMPARE(batch.messages[1].kind, JsonRpcKind::Notification);
  }

  void refusesGarbageWithItsReason() {
    QVERIFY(contains(refusal("Hello, world"), "not JSON: \"Hello, world\""));
    QVERIFY(contains(refusal(""), "not JSON"));
    QVERIFY(contains(refusal("{\"jsonrpc\":\"2.0\",\"id\":1,"), "not JSON"));
    QVERIFY(contains(refusal("42"), "must be a JSON object"));
    QVERIFY(contains(refusal("[]"), "empty batch"));
    QVERIFY(contains(refusal(R"({"id":1,"result":{}})"), "\"jsonrpc\" member is missing"));
    QVERIFY(contains(refusal(R"({"jsonrpc":"1.0","id":1,"result":{}})"), "not \"2.0\""));
    QVERIFY(contains(refusal(R"({"jsonrpc":"2.0","method":5})"), "\"method\" is not a string"));
    QVERIFY(contains(refusal(R"({"jsonrpc":"2.0","method":"x","id":true})"),
                     "not a string or an integer"));
    QVERIFY(contains(refusal(R"({"jsonrpc":"2.0","method":"x","id":1.5})"),
                     "not a string or an integer"));
    QVERIFY(contains(refusal(R"({"jsonrpc":"2.0","method":"x","params":3})"), "neither an object"));
    QVERIFY(contains(refusal(R"({"jsonrpc":"2.0","id":1,"result":{},"error":{}})"), "both"));
    QVERIFY(contains(refusal(R"({"jsonrpc":"2.0","id":1})"), "neither a request"));
    QVERIFY(contains(refusal(R"({"jsonrpc":"2.0","result":{}})"), "without an \"id\""));
    QVERIFY(contains(refusal(R"({"jsonrpc":"2.0","id":1,"error":{"message":"m"}})"),
                     "no integer \"code\""));
    QVERIFY(contains(refusal(R"({"jsonrpc":"2.0","id":1,"error":{"code":1}})"), "no \"message\""));
    QVERIFY(
        contains(refusal(R"([{"jsonrpc":"2.0","id":1,"result":{}},{"hello":1}])"), "in a batch"));
    // A long line is quoted only in part.
    const std::string long_line(10000, 'x');
    QVERIFY(refusal(long_line).size() < 200);
  }

  void writesMessages() {
    const JsonRpcMessage request =
        one(json_rpc_request(5, "tools/call", tools_call_params("echo", R"({"text":"hi"})")));
    QCOMPARE(request.kind, JsonRpcKind::Request);
    QCOMPARE(request.id, std::string("5"));
    QCOMPARE(request.params, std::string(R"({"arguments":{"text":"hi"},"name":"echo"})"));
    const JsonRpcMessage init =
        one(json_rpc_request(1, "initialize", initialize_params("Quire", "1.2")));
    QVERIFY(contains(init.params, R"("protocolVersion":"2025-06-18")"));
    QVERIFY(contains(init.params, R"("clientInfo":{"name":"Quire","version":"1.2"})"));
    QVERIFY(contains(init.params, R"("capabilities":{})"));
    const JsonRpcMessage cancelled = one(json_rpc_notification(
        "notifications/cancelled", cancelled_params(9, "timed out after 2 s")));
    QCOMPARE(cancelled.kind, JsonRpcKind::Notification);
    QCOMPARE(cancelled.params, std::string(R"({"reason":"timed out after 2 s","requestId":9})"));
    QCOMPARE(one(json_rpc_result("\"p1\"", "{}")).id, std::string("\"p1\""));
    QCOMPARE(one(json_rpc_error("3", -32601, "Method not found")).error_code, -32601);
    QCOMPARE(tools_list_params(""), std::string("{}"));
    QCOMPARE(tools_list_params("abc"), std::string(R"({"cursor":"abc"})"));
  }

  void readsInitializeResults() {
    InitializeResult r = read_initialize_result(
        R"({"protocolVersion":"2025-03-26","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"s","version":"2"},"instructions":"be nice"})");
    QVERIFY(r.error.empty());
    QCOMPARE(r.protocol_version, std::string("2025-03-26"));
    QVERIFY(r.has_tools);
    QVERIFY(r.tools_list_changed);
    QCOMPARE(r.server_name, std::string("s"));
    QCOMPARE(r.instructions, std::string("be nice"));
    r = read_initialize_result(R"({"protocolVersion":"2024-11-05","capabilities":{}})");
    QVERIFY(!r.has_tools);
    QVERIFY(!read_initialize_result(R"({"capabilities":{}})").error.empty());
    QVERIFY(!read_initialize_result("[]").error.empty());
    QVERIFY(is_known_protocol_version("2025-06-18"));
    QVERIFY(is_known_protocol_version("2025-03-26"));
    QVERIFY(is_known_protocol_version("2024-11-05"));
    QVERIFY(!is_known_protocol_version("2023-01-01"));
  }

  void readsToolLists() {
    ToolsListPage page = read_tools_list(
        R"({"tools":[{"name":"read","title":"Read","description":"Reads","inputSchema":{"type":"object","properties":{"p":{"type":"string"}}},"annotations":{"readOnlyHint":true,"destructiveHint":false}},{"name":"bare","annotations":{"title":"Bare one"}}],"nextCursor":"page2"})");
    QVERIFY(page.error.empty());
    QCOMPARE(page.tools.size(), std::size_t{2});
    QCOMPARE(page.tools[0].title, std::string("Read"));
    QVERIFY(page.tools[0].read_only_hint);
    QVERIFY(!page.tools[0].destructive_hint);
    QVERIFY(contains(page.tools[0].input_schema, "\"properties\""));
    QCOMPARE(page.tools[1].title, std::string("Bare one"));
    QCOMPARE(page.tools[1].input_schema, std::string(R"({"type":"object"})"));
    QVERIFY(page.tools[1].destructive_hint);
    QCOMPARE(page.next_cursor, std::string("page2"));
    QVERIFY(contains(read_tools_list(R"({"tools":[{"description":"x"}]})").error, "no name"));
    QVERIFY(contains(read_tools_list(R"({"tool":[]})").error, "no \"tools\" array"));
  }

  void readsEveryContentKind() {
    const std::string parts =
        R"({"content":[{"type":"text","text":"hello"},)"
        R"({"type":"image","data":"AAAAAAAA","mimeType":"image/png"},)"
        R"({"type":"audio","data":"AAAA","mimeType":"audio/wav"},)"
        R"({"type":"resource_link","uri":"file:///r.txt","name":"r.txt","mimeType":"text/plain"},)"
        R"({"type":"resource","resource":{"uri":"file:///n.md","mimeType":"text/markdown","text":"notes"}},)"
        R"({"type":"resource","resource":{"uri":"file:///b.bin","blob":"AAAA"}},)"
        R"({"type":"video"}]})";
    const ToolCallText r = read_tool_call_result(parts, 1 << 20);
    QVERIFY2(r.error.empty(), r.error.c_str());
    QCOMPARE(r.parts, 7);
    QVERIFY(!r.is_error);
    QVERIFY(contains(r.text, "hello\n\n[image: image/png, 6 bytes]"));
    QVERIFY(contains(r.text, "[audio: audio/wav, 3 bytes]"));
    QVERIFY(contains(r.text, "[resource link: r.txt <file:///r.txt>, text/plain]"));
    QVERIFY(contains(r.text, "[resource file:///n.md, text/markdown]\nnotes"));
    QVERIFY(contains(r.text, "[resource: file:///b.bin, 3 bytes]"));
    QVERIFY(contains(r.text, "[video content]"));

    const ToolCallText structured = read_tool_call_result(
        R"({"content":[],"structuredContent":{"sum":3},"isError":false})", 100);
    QCOMPARE(structured.structured_content, std::string(R"({"sum":3})"));
    QCOMPARE(structured.text, std::string(R"({"sum":3})"));
    const ToolCallText failed =
        read_tool_call_result(R"({"content":[{"type":"text","text":"no"}],"isError":true})", 100);
    QVERIFY(failed.is_error);
    QCOMPARE(failed.text, std::string("no"));
    QVERIFY(!read_tool_call_result(R"({"content":{"type":"text"}})", 100).error.empty());
    QVERIFY(!read_tool_call_result(R"({"content":[{"type":"text"}]})", 100).error.empty());
  }

  void cutsLongResults() {
    const std::string text(5000, 'a');
    const ToolCallText r =
        read_tool_call_result(R"({"content":[{"type":"text","text":")" + text + R"("}]})", 1000);
    QCOMPARE(r.full_bytes, std::size_t{5000});
    QCOMPARE(r.cut_bytes, std::size_t{4000});
    QVERIFY(r.text.starts_with(std::string(1000, 'a') +
                               "\n[... 4000 more bytes cut: the result had 5000 bytes]"));
    // Never inside a UTF-8 sequence: "é" is two bytes.
    std::string accents = "aé";  // 3 bytes
    QCOMPARE(cut_text(accents, 2), std::size_t{2});
    QVERIFY(accents.starts_with("a\n"));
    std::string short_text = "abc";
    QCOMPARE(cut_text(short_text, 3), std::size_t{0});
    QCOMPARE(short_text, std::string("abc"));
  }

  void namesFunctionsUniquely() {
    using Pairs = std::vector<std::pair<std::string, std::string>>;
    QCOMPARE(unique_function_names(Pairs{{"a", "echo"}, {"a", "add"}, {"b", "search"}}),
             (std::vector<std::string>{"echo", "add", "search"}));
    QCOMPARE(unique_function_names(Pairs{{"files", "read"}, {"web", "read"}, {"web", "fetch"}}),
             (std::vector<std::string>{"files__read", "web__read", "fetch"}));
    // Characters OpenAI refuses, and a prefixed name that clashes with another tool's own.
    QCOMPARE(
        unique_function_names(
            Pairs{{"my server", "get.item"}, {"x", "get/item"}, {"y", "my_server__get_item"}}),
        (std::vector<std::string>{"my_server__get_item", "x__get_item", "my_server__get_item_2"}));
    // Long names are cut to 64 characters and still unique.
    const std::string long_name(100, 'n');
    const std::vector<std::string> names =
        unique_function_names(Pairs{{"s", long_name}, {"s", long_name + "z"}});
    QCOMPARE(names[0].size(), std::size_t{64});
    QCOMPARE(names[1].size(), std::size_t{64});
    QVERIFY(names[0] != names[1]);
    QCOMPARE(unique_function_names(Pairs{{"s", ""}}), (std::vector<std::string>{"tool"}));
  }

  void configRoundTrips() {
    ToolServerConfig stdio;
    stdio.name = QStringLiteral("files");
    stdio.command = QStringLiteral("npx");
    stdio.arguments = {QStringLiteral("-y"),
                       QStringLiteral("@modelcontextprotocol/server-filesystem"),
                       QStringLiteral("/home/me/My Documents")};
    stdio.environment.insert(QStringLiteral("DEBUG"), QStringLiteral("1"));
    stdio.working_directory = QStringLiteral("/tmp");
    stdio.call_timeout_ms = 1234;
    stdio.enabled = false;
    ToolServerConfig http;
    http.name = QStringLiteral("search");
    http.transport = ToolTransport::Http;
    http.url = QUrl(QStringLiteral("https://example.org/mcp"));
    http.headers.insert(QStringLiteral("Authorization"), QStringLiteral("Bearer abc"));
    http.max_result_bytes = 4096;
    http.connect_timeout_ms = 5000;

    const QJsonArray array = tool_servers_to_json({stdio, http});
    // Through text, as Settings stores it.
    const QJsonArray read_back = QJsonDocument::fromJson(QJsonDocument(array).toJson()).array();
    QStringList errors;
    const QList<ToolServerConfig> servers = tool_servers_from_json(read_back, &errors);
    QVERIFY(errors.isEmpty());
    QCOMPARE(servers.size(), 2);
    QVERIFY(servers[0] == stdio);
    QVERIFY(servers[1] == http);
    QCOMPARE(array[0].toObject().value(QStringLiteral("args")).toArray().size(), 3);
    QCOMPARE(array[1].toObject().value(QStringLiteral("transport")).toString(),
             QStringLiteral("http"));
    QCOMPARE(
        stdio.target(),
        QStringLiteral("npx -y @modelcontextprotocol/server-filesystem \"/home/me/My Documents\""));

    // Defaults for what is missing.
    std::optional<ToolServerConfig> minimal =
        ToolServerConfig::fromJson(QJsonObject{{QStringLiteral("name"), QStringLiteral("m")},
                                               {QStringLiteral("command"), QStringLiteral("srv")}},
                                   nullptr);
    QVERIFY(minimal);
    QVERIFY(minimal->enabled);
    QCOMPARE(minimal->transport, ToolTransport::Stdio);
    QCOMPARE(minimal->call_timeout_ms, ToolServerConfig::kDefaultCallTimeoutMs);
    QCOMPARE(minimal->max_result_bytes, ToolServerConfig::kDefaultMaxResultBytes);
  }

  void configRefusesWrongTypes() {
    QString error;
    QVERIFY(!ToolServerConfig::fromJson(
        QJsonObject{{QStringLiteral("transport"), QStringLiteral("sse")}}, &error));
    QVERIFY2(error.contains(QStringLiteral("\"sse\"")), qPrintable(error));
    QVERIFY(!ToolServerConfig::fromJson(QJsonObject{{QStringLiteral("args"), QStringLiteral("-y")}},
                                        &error));
    QVERIFY2(error.contains(QStringLiteral("\"args\"")), qPrintable(error));
    QVERIFY(!ToolServerConfig::fromJson(
        QJsonObject{{QStringLiteral("env"), QJsonObject{{QStringLiteral("A"), 1}}}}, &error));
    QVERIFY2(error.contains(QStringLiteral("\"env\".\"A\"")), qPrintable(error));
    QVERIFY(
        !ToolServerConfig::fromJson(QJsonObject{{QStringLiteral("callTimeoutMs"), 1.5}}, &error));
    QVERIFY2(error.contains(QStringLiteral("callTimeoutMs")), qPrintable(error));
    QVERIFY(!ToolServerConfig::fromJson(
        QJsonObject{{QStringLiteral("enabled"), QStringLiteral("yes")}}, &error));
    QStringList errors;
    const QList<ToolServerConfig> servers = tool_servers_from_json(
        QJsonArray{QJsonObject{{QStringLiteral("name"), QStringLiteral("ok")}}, 3,
                   QJsonObject{{QStringLiteral("transport"), 1}}},
        &errors);
    QCOMPARE(servers.size(), 1);
    QCOMPARE(errors.size(), 2);
    QVERIFY(errors[0].startsWith(QStringLiteral("Entry 2")));
  }

  void validatesConfigs() {
    ToolServerConfig stdio;
    stdio.name = QStringLiteral("one");
    QVERIFY(stdio.validate().join(' ').contains(QStringLiteral("command is empty")));
    stdio.command = QStringLiteral("srv");
    QVERIFY(stdio.validate().isEmpty());
    stdio.call_timeout_ms = 0;
    QVERIFY(stdio.validate().join(' ').contains(QStringLiteral("call timeout")));

    ToolServerConfig http;
    http.name = QStringLiteral("two");
    http.transport = ToolTransport::Http;
    QVERIFY(http.validate().join(' ').contains(QStringLiteral("URL is empty")));
    for (const char* bad : {"ftp://example.org/mcp", "example.org/mcp", "http://"}) {
      http.url = QUrl(QString::fromLatin1(bad));
      QVERIFY2(
          http.validate().join(' ').contains(QStringLiteral("not an http:// or https:// address")),
          bad);
    }
    http.url = QUrl(QStringLiteral("http://127.0.0.1:8080/mcp"));
    QVERIFY(http.validate().isEmpty());
    http.headers.insert(QStringLiteral("Bad Header"), QStringLiteral("x"));
    QVERIFY(http.validate().join(' ').contains(
        QStringLiteral("\"Bad Header\" is not a valid header name")));
    http.headers.clear();

    ToolServerConfig unnamed = stdio;
    unnamed.name.clear();
    unnamed.call_timeout_ms = 1000;
    stdio.call_timeout_ms = 1000;
    ToolServerConfig twin = stdio;
    twin.name = QStringLiteral("ONE");
    const QStringList problems = validate_tool_servers({stdio, http, twin, unnamed});
    QVERIFY2(problems.join(' ').contains(
                 QStringLiteral("ONE: the name is used by more than one server")),
             qPrintable(problems.join('\n')));
    QVERIFY(problems.join(' ').contains(QStringLiteral("(unnamed): The server has no name")));
    QCOMPARE(problems.size(), 2);
    QVERIFY(validate_tool_servers({stdio, http}).isEmpty());
  }
};

QUIRE_TEST(McpProtocolTest)
#include "test_mcp_protocol.moc"
