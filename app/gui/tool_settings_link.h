#pragma once

// Settings → Tools: the user's tool servers between the panel, their file
// (tool-servers.json beside the settings file, private to the user: headers
// and variables often hold keys) and the running connections. Servers start
// only from this list: when the application starts (the enabled ones), or
// when the user asks for one with Connect / Test.

#include <QObject>
#include <QString>
#include <QStringList>

#include "quire/tools/tool_server_config.h"
#include "quire/ui/tool_server_settings.h"

namespace quire::ui {
class ToolServersPanel;
}
namespace quire::tools {
class ToolServers;
}

namespace quire::gui {

// The panel's entry as the client's settings, and back.
tools::ToolServerConfig config_of(const ui::ToolServerEntry& entry);
ui::ToolServerEntry entry_of(const tools::ToolServerConfig& config);

class ToolSettingsLink : public QObject {
  Q_OBJECT

 public:
  // `file`: where the list is kept.
  ToolSettingsLink(ui::ToolServersPanel& panel, tools::ToolServers& servers, QString file,
                   QObject* parent = nullptr);

  // Reads the file, shows the list and starts the enabled servers. A file
  // that cannot be read is left as it is and reported (notice()).
  void load();
  const QString& file() const { return file_; }

 signals:
  // Something the user should know: the file could not be read or written.
  void notice(const QString& text);

 private:
  void apply(const QList<ui::ToolServerEntry>& entries);
  bool save(const QList<tools::ToolServerConfig>& configs);
  void showState(const QString& server);

  ui::ToolServersPanel& panel_;
  tools::ToolServers& servers_;
  QString file_;
};

}  // namespace quire::gui
