#pragma once

// Plain data of the tool servers (MCP) a user adds in Settings → Tools: how
// to reach each one, what the application reports about it, and the checks
// the edit dialog runs before an entry is kept. No server runs unless the
// user added it; app/ starts them and turns their tools into calls that wait
// for approval in the chat.

#include <QList>
#include <QMetaType>
#include <QString>
#include <QStringList>

#include "quire/ui/settings_limits.h"

namespace quire::ui {

struct ToolServerEntry {
  enum class Transport {
    Stdio,  // a program on this computer, spoken to over its standard input and output
    Http,   // a server at a URL (MCP's streamable HTTP)
  };
  // One environment variable (NAME=value) or HTTP header (Name: value).
  struct NamedValue {
    QString name;
    QString value;

    friend bool operator==(const NamedValue&, const NamedValue&) = default;
  };

  // Unique among the entries (compared without case); the chat shows it in
  // "server › tool".
  QString name;
  Transport transport = Transport::Stdio;
  // Stdio: the program and its arguments, passed as they are, with no shell
  // in between; variables added to the application's environment; the folder
  // it starts in (empty: the application's own).
  QString command;
  QStringList arguments;
  QList<NamedValue> environment;
  QString working_directory;
  // Http: the server's address and the headers sent with every request.
  QString url;
  QList<NamedValue> headers;
  // Off keeps the entry without starting the server.
  bool enabled = true;
  int call_timeout_seconds = limits::kDefaultToolCallTimeoutSeconds;

  friend bool operator==(const ToolServerEntry&, const ToolServerEntry&) = default;
};

// What the application last reported about one server.
struct ToolServerStatusView {
  enum class State { Off, Starting, Connected, Failed };
  State state = State::Off;
  // For people: "Connected · 5 tools", "Failed: the process exited with code 3".
  QString text;

  friend bool operator==(const ToolServerStatusView&, const ToolServerStatusView&) = default;
};

// "stdio", "http", and back; an unknown id gives `ok` false and Stdio.
QString transport_id(ToolServerEntry::Transport transport);
ToolServerEntry::Transport parse_transport(const QString& id, bool* ok = nullptr);

// Lines of "NAME=value" or "Name: value" as typed in the dialog, read into
// values; blank lines are skipped, and each line that cannot be read gives a
// sentence saying which and why.
struct NamedValueLines {
  QList<ToolServerEntry::NamedValue> values;
  QStringList problems;
};
NamedValueLines parse_environment_lines(const QString& text);
NamedValueLines parse_header_lines(const QString& text);
// The values as lines again, for the dialog's fields.
QString environment_lines(const QList<ToolServerEntry::NamedValue>& variables);
QString header_lines(const QList<ToolServerEntry::NamedValue>& headers);

struct ToolServerIssue {
  enum class Field { Name, Command, Environment, WorkingDirectory, Url, Headers };

  Field field = Field::Name;
  QString message;  // a sentence a user can act on

  friend bool operator==(const ToolServerIssue&, const ToolServerIssue&) = default;
};

// Problems with `entry` that keep the dialog from saving it. `taken_names`
// are the other entries' names. Only the chosen transport's fields are checked:
// the other's are kept for switching back but never used.
QList<ToolServerIssue> validate_tool_server(const ToolServerEntry& entry,
                                            const QStringList& taken_names);

}  // namespace quire::ui

Q_DECLARE_METATYPE(quire::ui::ToolServerEntry)
Q_DECLARE_METATYPE(quire::ui::ToolServerStatusView)
Q_DECLARE_METATYPE(quire::ui::ToolServerIssue)
