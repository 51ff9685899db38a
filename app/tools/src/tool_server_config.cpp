#include "quire/tools/tool_server_config.h"

#include <QJsonValue>
#include <QSet>
#include <limits>

namespace quire::tools {
namespace {

QJsonObject map_to_json(const QMap<QString, QString>& map) {
  QJsonObject object;
  for (auto it = map.begin(); it != map.end(); ++it)
    object.insert(it.key(), it.value());
  return object;
}

bool read_map(const QJsonObject& object, const QString& key, QMap<QString, QString>* out,
              QString* error) {
  const QJsonValue value = object.value(key);
  if (value.isUndefined() || value.isNull()) return true;
  if (!value.isObject()) {
    *error = QStringLiteral("\"%1\" is not an object").arg(key);
    return false;
  }
  const QJsonObject map = value.toObject();
  for (auto it = map.begin(); it != map.end(); ++it) {
    if (!it.value().isString()) {
      *error = QStringLiteral("\"%1\".\"%2\" is not a string").arg(key, it.key());
      return false;
    }
    out->insert(it.key(), it.value().toString());
  }
  return true;
}

bool read_string(const QJsonObject& object, const QString& key, QString* out, QString* error) {
  const QJsonValue value = object.value(key);
  if (value.isUndefined() || value.isNull()) return true;
  if (!value.isString()) {
    *error = QStringLiteral("\"%1\" is not a string").arg(key);
    return false;
  }
  *out = value.toString();
  return true;
}

template <typename Integer>
bool read_integer(const QJsonObject& object, const QString& key, Integer* out, QString* error) {
  const QJsonValue value = object.value(key);
  if (value.isUndefined() || value.isNull()) return true;
  const double number = value.toDouble(-1e300);
  if (!value.isDouble() || number != static_cast<double>(static_cast<qint64>(number)) ||
      number < -2e15 || number > 2e15) {
    *error = QStringLiteral("\"%1\" is not an integer").arg(key);
    return false;
  }
  if (number > static_cast<double>(std::numeric_limits<Integer>::max()) ||
      number < static_cast<double>(std::numeric_limits<Integer>::min())) {
    *error = QStringLiteral("\"%1\" is out of range").arg(key);
    return false;
  }
  *out = static_cast<Integer>(number);
  return true;
}

bool is_token(const QString& name) {
  if (name.isEmpty()) return false;
  for (QChar c : name) {
    const ushort u = c.unicode();
    const bool ok = (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9') ||
                    QStringLiteral("!#$%&'*+-.^_`|~").contains(c);
    if (!ok) return false;
  }
  return true;
}

}  // namespace

QJsonObject ToolServerConfig::toJson() const {
  QJsonObject object;
  object.insert(QStringLiteral("name"), name);
  object.insert(QStringLiteral("transport"), transport == ToolTransport::Http
                                                 ? QStringLiteral("http")
                                                 : QStringLiteral("stdio"));
  object.insert(QStringLiteral("enabled"), enabled);
  if (transport == ToolTransport::Stdio) {
    object.insert(QStringLiteral("command"), command);
    object.insert(QStringLiteral("args"), QJsonArray::fromStringList(arguments));
    if (!environment.isEmpty()) object.insert(QStringLiteral("env"), map_to_json(environment));
    if (!working_directory.isEmpty()) object.insert(QStringLiteral("cwd"), working_directory);
  } else {
    object.insert(QStringLiteral("url"), url.toString());
    if (!headers.isEmpty()) object.insert(QStringLiteral("headers"), map_to_json(headers));
  }
  object.insert(QStringLiteral("connectTimeoutMs"), connect_timeout_ms);
  object.insert(QStringLiteral("callTimeoutMs"), call_timeout_ms);
  object.insert(QStringLiteral("maxResultBytes"), static_cast<double>(max_result_bytes));
  return object;
}

std::optional<ToolServerConfig> ToolServerConfig::fromJson(const QJsonObject& object,
                                                           QString* error) {
  QString ignored;
  QString& why = error ? *error : ignored;
  ToolServerConfig config;
  if (!read_string(object, QStringLiteral("name"), &config.name, &why)) return std::nullopt;
  QString transport = QStringLiteral("stdio");
  if (!read_string(object, QStringLiteral("transport"), &transport, &why)) return std::nullopt;
  if (transport == QLatin1String("stdio")) {
    config.transport = ToolTransport::Stdio;
  } else if (transport == QLatin1String("http")) {
    config.transport = ToolTransport::Http;
  } else {
    why = QStringLiteral("\"transport\" is \"%1\", not \"stdio\" or \"http\"").arg(transport);
    return std::nullopt;
  }
  const QJsonValue enabled = object.value(QStringLiteral("enabled"));
  if (!enabled.isUndefined() && !enabled.isNull()) {
    if (!enabled.isBool()) {
      why = QStringLiteral("\"enabled\" is not true or false");
      return std::nullopt;
    }
    config.enabled = enabled.toBool();
  }
  if (!read_string(object, QStringLiteral("command"), &config.command, &why)) return std::nullopt;
  const QJsonValue args = object.value(QStringLiteral("args"));
  if (!args.isUndefined() && !args.isNull()) {
    if (!args.isArray()) {
      why = QStringLiteral("\"args\" is not an array");
      return std::nullopt;
    }
    for (const QJsonValue& arg : args.toArray()) {
      if (!arg.isString()) {
        why = QStringLiteral("an entry of \"args\" is not a string");
        return std::nullopt;
      }
      config.arguments.append(arg.toString());
    }
  }
  if (!read_map(object, QStringLiteral("env"), &config.environment, &why)) return std::nullopt;
  if (!read_string(object, QStringLiteral("cwd"), &config.working_directory, &why)) {
    return std::nullopt;
  }
  QString url;
  if (!read_string(object, QStringLiteral("url"), &url, &why)) return std::nullopt;
  if (!url.isEmpty()) config.url = QUrl(url, QUrl::StrictMode);
  if (!read_map(object, QStringLiteral("headers"), &config.headers, &why)) return std::nullopt;
  if (!read_integer(object, QStringLiteral("connectTimeoutMs"), &config.connect_timeout_ms, &why) ||
      !read_integer(object, QStringLiteral("callTimeoutMs"), &config.call_timeout_ms, &why) ||
      !read_integer(object, QStringLiteral("maxResultBytes"), &config.max_result_bytes, &why)) {
    return std::nullopt;
  }
  return config;
}

QStringList ToolServerConfig::validate() const {
  QStringList problems;
  if (name.trimmed().isEmpty()) problems << QStringLiteral("The server has no name.");
  if (transport == ToolTransport::Stdio) {
    if (command.trimmed().isEmpty()) problems << QStringLiteral("The command is empty.");
  } else {
    const QString scheme = url.scheme().toLower();
    if (url.isEmpty()) {
      problems << QStringLiteral("The URL is empty.");
    } else if (!url.isValid() ||
               (scheme != QLatin1String("http") && scheme != QLatin1String("https")) ||
               url.host().isEmpty()) {
      problems << QStringLiteral(
                      "The URL \"%1\" is not an http:// or https:// address with a host.")
                      .arg(url.toString());
    }
    for (auto it = headers.begin(); it != headers.end(); ++it) {
      if (!is_token(it.key())) {
        problems << QStringLiteral("\"%1\" is not a valid header name.").arg(it.key());
      }
      if (it.value().contains(QLatin1Char('\n')) || it.value().contains(QLatin1Char('\r'))) {
        problems << QStringLiteral("The value of header \"%1\" has a line break.").arg(it.key());
      }
    }
  }
  if (connect_timeout_ms <= 0) problems << QStringLiteral("The start timeout is not positive.");
  if (call_timeout_ms <= 0) problems << QStringLiteral("The call timeout is not positive.");
  if (max_result_bytes <= 0) problems << QStringLiteral("The result size limit is not positive.");
  return problems;
}

QString ToolServerConfig::target() const {
  if (transport == ToolTransport::Http) return url.toString(QUrl::RemoveUserInfo);
  QStringList parts{command};
  for (const QString& argument : arguments) {
    parts << (argument.contains(QLatin1Char(' ')) ? QLatin1Char('"') + argument + QLatin1Char('"')
                                                  : argument);
  }
  return parts.join(QLatin1Char(' '));
}

bool ToolServerConfig::operator==(const ToolServerConfig& other) const {
  return name == other.name && transport == other.transport && enabled == other.enabled &&
         command == other.command && arguments == other.arguments &&
         environment == other.environment && working_directory == other.working_directory &&
         url == other.url && headers == other.headers &&
         connect_timeout_ms == other.connect_timeout_ms &&
         call_timeout_ms == other.call_timeout_ms && max_result_bytes == other.max_result_bytes;
}

QStringList validate_tool_servers(const QList<ToolServerConfig>& servers) {
  QStringList problems;
  QSet<QString> seen;
  QSet<QString> reported;
  for (const ToolServerConfig& server : servers) {
    const QString label =
        server.name.trimmed().isEmpty() ? QStringLiteral("(unnamed)") : server.name;
    for (const QString& problem : server.validate())
      problems << label + QStringLiteral(": ") + problem;
    const QString key = server.name.trimmed().toCaseFolded();
    if (key.isEmpty()) continue;
    if (seen.contains(key) && !reported.contains(key)) {
      problems << QStringLiteral("%1: the name is used by more than one server.").arg(label);
      reported.insert(key);
    }
    seen.insert(key);
  }
  return problems;
}

QJsonArray tool_servers_to_json(const QList<ToolServerConfig>& servers) {
  QJsonArray array;
  for (const ToolServerConfig& server : servers)
    array.append(server.toJson());
  return array;
}

QList<ToolServerConfig> tool_servers_from_json(const QJsonArray& array, QStringList* errors) {
  QList<ToolServerConfig> servers;
  for (qsizetype i = 0; i < array.size(); ++i) {
    if (!array.at(i).isObject()) {
      if (errors) *errors << QStringLiteral("Entry %1 is not an object.").arg(i + 1);
      continue;
    }
    QString error;
    std::optional<ToolServerConfig> config =
        ToolServerConfig::fromJson(array.at(i).toObject(), &error);
    if (!config) {
      if (errors) *errors << QStringLiteral("Entry %1: %2.").arg(i + 1).arg(error);
      continue;
    }
    servers.append(*config);
  }
  return servers;
}

}  // namespace quire::tools
