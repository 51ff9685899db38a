#pragma once

// The test servers of tests/reference (mcp_test_server.mjs, built on the
// official MCP TypeScript SDK, and mcp_garbage_server.mjs) as the client
// tests start them. Node.js and `npm ci --prefix tests/reference` are
// needed; the tests fail, saying so, without them.

#include <QProcess>
#include <QString>
#include <QStringList>
#include <memory>

#include "quire/tools/mcp_client.h"
#include "quire/tools/tool_server_config.h"

namespace quire::tools::test {

// Why the SDK's servers cannot run here, or "" when they can.
QString missing_node();

// The SDK server over stdio, with `extra` arguments (--page-size N).
ToolServerConfig stdio_server(const QString& name, const QStringList& extra = {});
// The garbage server in `mode`.
ToolServerConfig garbage_server(const QString& name, const QString& mode);

// The SDK server over Streamable HTTP in a node process of its own.
class HttpServer {
 public:
  ~HttpServer();
  // Starts it and waits for its port; false (with `error`) when it does not come up.
  bool start(QString* error, const QStringList& extra = {});
  ToolServerConfig config(const QString& name) const;
  // What it wrote on stderr so far.
  QString log();

 private:
  std::unique_ptr<QProcess> process_;
  int port_ = 0;
  QString log_;
};

// Waits for the client to leave Connecting; true when it is ready.
bool wait_ready(McpClient& client, int timeout_ms = 30000);
// Waits for the call to finish; true when it did in time.
bool wait_finished(ToolCall* call, int timeout_ms = 30000);

// Every tool of the SDK test server, in its order.
extern const QStringList kSdkTools;

}  // namespace quire::tools::test

// Fails the test, saying why, when Node.js or the SDK cannot run.
#define REQUIRE_NODE()                                  \
  do {                                                  \
    const QString missing = missing_node();             \
    if (!missing.isEmpty()) QFAIL(qPrintable(missing)); \
  } while (false)
