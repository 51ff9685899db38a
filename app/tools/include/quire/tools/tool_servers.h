#pragma once

// The user's MCP tool servers together: one McpClient each, started only
// when asked (never on their own), and their tools offered to the model as
// OpenAI-style function definitions whose names are unique across servers.
//
//   ToolServers servers;
//   servers.setServers(configs_from_settings);   // problems -> nothing changes
//   connect(&servers, &ToolServers::serverStateChanged, ...);
//   connect(&servers, &ToolServers::toolsChanged, ...);  // re-read definitions
//   servers.startEnabled();
//   ... request.tools = servers.functionDefinitions();
//   ... the model calls "echo" with arguments text; the user approves:
//   ToolCall* call = servers.call("echo", arguments_text);
//   connect(call, &ToolCall::finished, [call](const ToolCallResult& r) {
//     append_tool_message(r.text, r.is_error); show(r.summary);
//     call->deleteLater();
//   });
//
// Function names: a tool's own name when only one server offers it, else
// "server__tool" (mcp_protocol.h's unique_function_names); function(name)
// maps a name back to the server and the tool.

#include <QJsonArray>
#include <QList>
#include <QObject>
#include <QString>
#include <QStringList>
#include <optional>

#include "quire/tools/mcp_client.h"
#include "quire/tools/tool_server_config.h"

namespace quire::tools {

// One tool offered to the model.
struct ToolFunction {
  QString function_name;  // what the model calls
  QString server;         // the server's name
  McpTool tool;           // the tool as the server describes it

  // {"type": "function", "function": {"name", "description", "parameters"}}
  QJsonObject definition() const;
};

class ToolServers : public QObject {
  Q_OBJECT

 public:
  explicit ToolServers(QObject* parent = nullptr);
  ~ToolServers() override;

  // Replaces the configured servers. Returns the problems (validate_tool_servers)
  // and changes nothing when there are any. A server whose settings are
  // unchanged keeps its connection; a changed one is stopped and, when it
  // was running and is still enabled, started again; a removed one is
  // stopped.
  QStringList setServers(const QList<ToolServerConfig>& servers);
  QList<ToolServerConfig> servers() const { return configs_; }

  // Starts every enabled server that is stopped or failed.
  void startEnabled();
  // Starts or stops one server by name (a disabled one starts too: the user
  // asked). Returns false when there is no such server.
  bool start(const QString& server);
  bool stop(const QString& server);
  // Ends every connection as the specification's shutdown says (stdin
  // closed, then SIGTERM, then SIGKILL; an HTTP session DELETEd); each
  // reaches Stopped within about five seconds. Deleting ToolServers ends
  // them at once instead (processes killed).
  void stopAll();

  McpClient* client(const QString& server) const;
  McpClient::State state(const QString& server) const;
  QString errorString(const QString& server) const;

  // The tools of every ready server, in the order of the servers and then
  // of each server's list.
  QList<ToolFunction> functions() const { return functions_; }
  QJsonArray functionDefinitions() const;
  std::optional<ToolFunction> function(const QString& function_name) const;

  // Calls the function the model named with its arguments as JSON text
  // ("" means {}). Text that is not a JSON object, an unknown name or a
  // server that is not ready make a call that fails (finished() from the
  // event loop) with a message the model can read.
  ToolCall* call(const QString& function_name, const QString& arguments_json);

 signals:
  // A server connects, is ready, failed (message says why), or stopped.
  void serverStateChanged(const QString& server, quire::tools::McpClient::State state,
                          const QString& message);
  // functions() changed.
  void toolsChanged();

 private:
  McpClient* makeClient(const ToolServerConfig& config);
  void rebuildFunctions();

  QList<ToolServerConfig> configs_;
  QList<McpClient*> clients_;  // in the order of configs_
  QList<ToolFunction> functions_;
};

}  // namespace quire::tools
