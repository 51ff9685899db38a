#pragma once

// One MCP tool server as the user configures it (Settings -> Tools), and its
// JSON form for the settings file:
//
//   {"name": "files", "transport": "stdio", "enabled": true,
//    "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/home/me"],
//    "env": {"DEBUG": "1"}, "cwd": "/home/me",
//    "connectTimeoutMs": 30000, "callTimeoutMs": 60000, "maxResultBytes": 1048576}
//   {"name": "search", "transport": "http", "url": "https://example.org/mcp",
//    "headers": {"Authorization": "Bearer ..."}}
//
// Headers may hold secrets (an Authorization header); whoever stores the
// JSON decides where they go.

#include <QJsonArray>
#include <QJsonObject>
#include <QList>
#include <QMap>
#include <QString>
#include <QStringList>
#include <QUrl>
#include <optional>

namespace quire::tools {

enum class ToolTransport { Stdio, Http };

struct ToolServerConfig {
  static constexpr int kDefaultConnectTimeoutMs = 30000;
  static constexpr int kDefaultCallTimeoutMs = 60000;
  static constexpr qint64 kDefaultMaxResultBytes = 1024 * 1024;

  QString name;  // shown to people, and the prefix of clashing function names
  ToolTransport transport = ToolTransport::Stdio;
  bool enabled = true;
  // stdio: the program, its arguments, variables added to (or replacing in)
  // the app's environment, and the working directory ("" for the app's).
  QString command;
  QStringList arguments;
  QMap<QString, QString> environment;
  QString working_directory;
  // http: the endpoint and the headers sent with every request.
  QUrl url;
  QMap<QString, QString> headers;
  // How long starting (the process or connection, and initialize) may take,
  // how long one tool call may take, and how much text a result keeps.
  int connect_timeout_ms = kDefaultConnectTimeoutMs;
  int call_timeout_ms = kDefaultCallTimeoutMs;
  qint64 max_result_bytes = kDefaultMaxResultBytes;

  QJsonObject toJson() const;
  // Reads what toJson wrote (missing members take their defaults). Returns
  // nullopt and sets `error` when a member has the wrong type or the
  // transport is unknown; validate() judges the values.
  static std::optional<ToolServerConfig> fromJson(const QJsonObject& object, QString* error);

  // What is wrong with this server's settings, one sentence each (empty
  // when nothing): no name, no command, a URL that is not http(s) with a
  // host, a timeout or limit that is not positive, a header name that is
  // not a token.
  QStringList validate() const;

  // "npx -y server" or the URL, for people.
  QString target() const;

  bool operator==(const ToolServerConfig& other) const;
  bool operator!=(const ToolServerConfig& other) const { return !(*this == other); }
};

// Each server's problems prefixed by its name, and names used twice
// (compared ignoring case).
QStringList validate_tool_servers(const QList<ToolServerConfig>& servers);

QJsonArray tool_servers_to_json(const QList<ToolServerConfig>& servers);
// Every entry that reads; entries that do not are left out and described
// in `errors` when it is given.
QList<ToolServerConfig> tool_servers_from_json(const QJsonArray& array, QStringList* errors);

}  // namespace quire::tools
