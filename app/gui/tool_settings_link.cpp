#include "tool_settings_link.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>

#include "quire/tools/tool_servers.h"
#include "quire/ui/tool_servers_panel.h"

namespace quire::gui {
namespace {

QMap<QString, QString> map_of(const QList<ui::ToolServerEntry::NamedValue>& values) {
  QMap<QString, QString> map;
  for (const ui::ToolServerEntry::NamedValue& value : values)
    map.insert(value.name, value.value);
  return map;
}

QList<ui::ToolServerEntry::NamedValue> values_of(const QMap<QString, QString>& map) {
  QList<ui::ToolServerEntry::NamedValue> values;
  for (auto it = map.begin(); it != map.end(); ++it)
    values.append({it.key(), it.value()});
  return values;
}

}  // namespace

tools::ToolServerConfig config_of(const ui::ToolServerEntry& entry) {
  tools::ToolServerConfig config;
  config.name = entry.name;
  config.transport = entry.transport == ui::ToolServerEntry::Transport::Http
                         ? tools::ToolTransport::Http
                         : tools::ToolTransport::Stdio;
  config.enabled = entry.enabled;
  config.command = entry.command;
  config.arguments = entry.arguments;
  config.environment = map_of(entry.environment);
  config.working_directory = entry.working_directory;
  config.url = QUrl(entry.url);
  config.headers = map_of(entry.headers);
  config.call_timeout_ms = entry.call_timeout_seconds * 1000;
  return config;
}

ui::ToolServerEntry entry_of(const tools::ToolServerConfig& config) {
  ui::ToolServerEntry entry;
  entry.name = config.name;
  entry.transport = config.transport == tools::ToolTransport::Http
                        ? ui::ToolServerEntry::Transport::Http
                        : ui::ToolServerEntry::Transport::Stdio;
  entry.enabled = config.enabled;
  entry.command = config.command;
  entry.arguments = config.arguments;
  entry.environment = values_of(config.environment);
  entry.working_directory = config.working_directory;
  entry.url = config.url.toString();
  entry.headers = values_of(config.headers);
  entry.call_timeout_seconds = std::max(1, config.call_timeout_ms / 1000);
  return entry;
}

ToolSettingsLink::ToolSettingsLink(ui::ToolServersPanel& panel, tools::ToolServers& servers,
                                   QString file, QObject* parent)
    : QObject(parent), panel_(panel), servers_(servers), file_(std::move(file)) {
  connect(&panel_, &ui::ToolServersPanel::entriesChanged, this, &ToolSettingsLink::apply);
  connect(&panel_, &ui::ToolServersPanel::testRequested, this,
          [this](const ui::ToolServerEntry& entry) { servers_.start(entry.name); });
  connect(&servers_, &tools::ToolServers::serverStateChanged, this,
          [this](const QString& server) { showState(server); });
  connect(&servers_, &tools::ToolServers::toolsChanged, this, [this] {
    for (const tools::ToolServerConfig& config : servers_.servers())
      showState(config.name);
  });
}

void ToolSettingsLink::load() {
  QFile file(file_);
  if (!file.exists()) return;
  if (!file.open(QIODevice::ReadOnly)) {
    emit notice(tr("The tool servers in %1 could not be read: %2.").arg(file_, file.errorString()));
    return;
  }
  QJsonParseError error;
  const QJsonDocument document = QJsonDocument::fromJson(file.readAll(), &error);
  if (!document.isArray()) {
    emit notice(tr("The tool servers in %1 could not be read (%2); the file is left as it is and "
                   "no tool server starts.")
                    .arg(file_, error.error != QJsonParseError::NoError ? error.errorString()
                                                                        : tr("it holds no list")));
    return;
  }
  QList<tools::ToolServerConfig> configs;
  for (const QJsonValue& value : document.array()) {
    QString problem;
    const std::optional<tools::ToolServerConfig> config =
        tools::ToolServerConfig::fromJson(value.toObject(), &problem);
    if (!config) {
      emit notice(tr("A tool server in %1 was left out: %2.").arg(file_, problem));
      continue;
    }
    configs.append(*config);
  }
  if (const QStringList problems = servers_.setServers(configs); !problems.isEmpty()) {
    emit notice(tr("The tool servers in %1 were not started: %2")
                    .arg(file_, problems.join(QLatin1Char(' '))));
    return;
  }
  QList<ui::ToolServerEntry> entries;
  for (const tools::ToolServerConfig& config : configs)
    entries.append(entry_of(config));
  panel_.setEntries(entries);
  servers_.startEnabled();
  for (const tools::ToolServerConfig& config : configs)
    showState(config.name);
}

void ToolSettingsLink::apply(const QList<ui::ToolServerEntry>& entries) {
  QList<tools::ToolServerConfig> configs;
  for (const ui::ToolServerEntry& entry : entries) {
    // What the panel kept of a server it does not show (limits, connect
    // timeout) stays as the file had it.
    tools::ToolServerConfig config = config_of(entry);
    for (const tools::ToolServerConfig& known : servers_.servers()) {
      if (known.name != entry.name) continue;
      config.connect_timeout_ms = known.connect_timeout_ms;
      config.max_result_bytes = known.max_result_bytes;
    }
    configs.append(config);
  }
  if (const QStringList problems = servers_.setServers(configs); !problems.isEmpty()) {
    emit notice(tr("The tool servers were not changed: %1").arg(problems.join(QLatin1Char(' '))));
    QList<ui::ToolServerEntry> shown;
    for (const tools::ToolServerConfig& config : servers_.servers())
      shown.append(entry_of(config));
    panel_.setEntries(shown);
    return;
  }
  save(configs);
  servers_.startEnabled();
  for (const tools::ToolServerConfig& config : configs)
    showState(config.name);
}

bool ToolSettingsLink::save(const QList<tools::ToolServerConfig>& configs) {
  QJsonArray list;
  for (const tools::ToolServerConfig& config : configs)
    list.append(config.toJson());
  QSaveFile file(file_);
  const bool written = file.open(QIODevice::WriteOnly) &&
                       file.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner) &&
                       file.write(QJsonDocument(list).toJson()) >= 0 && file.commit();
  if (!written) {
    emit notice(tr("The tool servers could not be saved to %1: %2. They run as set until Quire "
                   "quits.")
                    .arg(file_, file.errorString()));
  }
  return written;
}

void ToolSettingsLink::showState(const QString& server) {
  using State = tools::McpClient::State;
  ui::ToolServerStatusView status;
  switch (servers_.state(server)) {
    case State::Stopped:
    case State::Stopping:
      status.state = ui::ToolServerStatusView::State::Off;
      status.text = tr("Off");
      break;
    case State::Connecting:
      status.state = ui::ToolServerStatusView::State::Starting;
      status.text = tr("Connecting…");
      break;
    case State::Ready: {
      int count = 0;
      for (const tools::ToolFunction& function : servers_.functions())
        count += function.server == server ? 1 : 0;
      status.state = ui::ToolServerStatusView::State::Connected;
      status.text = count == 1 ? tr("Connected · 1 tool") : tr("Connected · %1 tools").arg(count);
      break;
    }
    case State::Failed:
      status.state = ui::ToolServerStatusView::State::Failed;
      status.text = tr("Failed: %1").arg(servers_.errorString(server));
      break;
  }
  panel_.setStatus(server, status);
}

}  // namespace quire::gui
