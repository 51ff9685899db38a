#include "quire/ui/tool_server_settings.h"

#include <QCoreApplication>
#include <QFileInfo>
#include <QUrl>

namespace quire::ui {
namespace {

QString tr(const char* text) {
  return QCoreApplication::translate("quire::ui::ToolServerDialog", text);
}

// RFC 9110's token: the characters a header's name may hold.
bool isHeaderName(const QString& name) {
  if (name.isEmpty()) return false;
  for (const QChar c : name) {
    const bool plain =
        (c >= u'a' && c <= u'z') || (c >= u'A' && c <= u'Z') || (c >= u'0' && c <= u'9');
    if (!plain && !QStringLiteral("!#$%&'*+-.^_`|~").contains(c)) return false;
  }
  return true;
}

bool isVariableName(const QString& name) {
  if (name.isEmpty()) return false;
  for (const QChar c : name) {
    if (c.isSpace()) return false;
  }
  return true;
}

// Splits each non-blank line at the first `separator`; the name is trimmed,
// and so is the value (a header's value never keeps its outer blanks).
NamedValueLines parseLines(const QString& text, QChar separator, bool (*validName)(const QString&),
                           const QString& missingSeparator, const QString& badName) {
  NamedValueLines parsed;
  const QStringList lines = text.split(u'\n');
  for (qsizetype i = 0; i < lines.size(); ++i) {
    const QString line = lines.at(i).trimmed();
    if (line.isEmpty()) continue;
    const qsizetype at = line.indexOf(separator);
    const QString name = at < 0 ? QString() : line.left(at).trimmed();
    if (at < 0) {
      parsed.problems << missingSeparator.arg(QString::number(i + 1), line);
    } else if (!validName(name)) {
      parsed.problems << badName.arg(QString::number(i + 1), name);
    } else {
      parsed.values.append({name, line.mid(at + 1).trimmed()});
    }
  }
  return parsed;
}

}  // namespace

QString transport_id(ToolServerEntry::Transport transport) {
  return transport == ToolServerEntry::Transport::Http ? QStringLiteral("http")
                                                       : QStringLiteral("stdio");
}

ToolServerEntry::Transport parse_transport(const QString& id, bool* ok) {
  const bool known = id == u"stdio" || id == u"http";
  if (ok) *ok = known;
  return id == u"http" ? ToolServerEntry::Transport::Http : ToolServerEntry::Transport::Stdio;
}

NamedValueLines parse_environment_lines(const QString& text) {
  return parseLines(text, u'=', isVariableName,
                    tr("Line %1, “%2”: write each variable as NAME=value."),
                    tr("Line %1: “%2” is no variable name; names have no spaces."));
}

NamedValueLines parse_header_lines(const QString& text) {
  return parseLines(text, u':', isHeaderName,
                    tr("Line %1, “%2”: write each header as Name: value."),
                    tr("Line %1: “%2” is no header name; use letters, digits and - only."));
}

QString environment_lines(const QList<ToolServerEntry::NamedValue>& variables) {
  QStringList lines;
  for (const ToolServerEntry::NamedValue& variable : variables)
    lines << variable.name + u'=' + variable.value;
  return lines.join(u'\n');
}

QString header_lines(const QList<ToolServerEntry::NamedValue>& headers) {
  QStringList lines;
  for (const ToolServerEntry::NamedValue& header : headers)
    lines << header.name + QStringLiteral(": ") + header.value;
  return lines.join(u'\n');
}

QList<ToolServerIssue> validate_tool_server(const ToolServerEntry& entry,
                                            const QStringList& taken_names) {
  using Field = ToolServerIssue::Field;
  QList<ToolServerIssue> issues;
  const QString name = entry.name.trimmed();
  if (name.isEmpty()) {
    issues.append({Field::Name, tr("Give the server a name; the chat shows it with its tools.")});
  } else if (taken_names.contains(name, Qt::CaseInsensitive)) {
    issues.append({Field::Name, tr("Another server is already called “%1”.").arg(name)});
  }

  if (entry.transport == ToolServerEntry::Transport::Stdio) {
    if (entry.command.trimmed().isEmpty()) {
      issues.append({Field::Command, tr("Enter the program that starts the server, such as "
                                        "npx, uvx or the path of its executable.")});
    }
    const QString folder = entry.working_directory.trimmed();
    if (!folder.isEmpty() && !QFileInfo(folder).isDir()) {
      issues.append({Field::WorkingDirectory, tr("There is no folder at “%1”.").arg(folder)});
    }
    for (const ToolServerEntry::NamedValue& variable : entry.environment) {
      if (!isVariableName(variable.name)) {
        issues.append({Field::Environment,
                       tr("“%1” is no variable name; names have no spaces.").arg(variable.name)});
      }
    }
  } else {
    const QUrl url(entry.url.trimmed(), QUrl::StrictMode);
    const QString scheme = url.scheme().toLower();
    if (entry.url.trimmed().isEmpty()) {
      issues.append({Field::Url, tr("Enter the server's address, such as "
                                    "http://localhost:3000/mcp.")});
    } else if (!url.isValid() || (scheme != u"http" && scheme != u"https") ||
               url.host().isEmpty()) {
      issues.append({Field::Url, tr("The address must start with http:// or https:// and name "
                                    "a host, such as http://localhost:3000/mcp.")});
    }
    for (const ToolServerEntry::NamedValue& header : entry.headers) {
      if (!isHeaderName(header.name)) {
        issues.append(
            {Field::Headers,
             tr("“%1” is no header name; use letters, digits and - only.").arg(header.name)});
      }
    }
  }
  return issues;
}

}  // namespace quire::ui
