#pragma once

// Settings → Tools: the tool servers (MCP) the model may call. A list with an
// enabled check box, what each server connects to and the status the
// application reports; Add…, Edit… and Remove change the list through the
// edit dialog (tool_server_dialog.h), and Connect / Test asks the
// application to try one server now. Like Settings → Server there is nothing
// to apply: every change announces the whole list at once.
//
// Object names: "toolServersPanel", "toolServerList" (a QTreeWidget, one
// top-level item per server, column 0 checkable), "addToolServer",
// "editToolServer", "removeToolServer", "testToolServer",
// "toolServersExplanation", "toolServersEmpty".

#include <QGroupBox>
#include <QHash>
#include <QList>
#include <QStringList>
#include <functional>
#include <optional>

#include "quire/ui/tool_server_settings.h"

class QLabel;
class QPushButton;
class QTreeWidget;
class QTreeWidgetItem;

namespace quire::ui {

class ToolServersPanel : public QGroupBox {
  Q_OBJECT

 public:
  enum Column { NameColumn, TargetColumn, StatusColumn };

  // Asked for an entry when Add… or Edit… is pressed: `start` is the entry to
  // edit (a default one for Add), `taken_names` the other servers' names;
  // nullopt on cancel. The default runs ToolServerDialog.
  using EntryEditor = std::function<std::optional<ToolServerEntry>(
      QWidget* parent, const ToolServerEntry& start, const QStringList& taken_names)>;

  explicit ToolServersPanel(QWidget* parent = nullptr);

  // Shows `entries` without announcing them. Statuses of servers no longer
  // listed are dropped.
  void setEntries(const QList<ToolServerEntry>& entries);
  const QList<ToolServerEntry>& entries() const { return entries_; }
  // What the application reports about server `name`; unknown names are ignored.
  void setStatus(const QString& name, const ToolServerStatusView& status);
  ToolServerStatusView status(const QString& name) const { return statuses_.value(name); }
  // The row of server `name` is selected (for Edit, Remove and Test).
  void selectServer(const QString& name);
  // The server of the selected row; -1 with none.
  int selectedIndex() const;
  void setEntryEditor(EntryEditor editor);

 public slots:
  void addServer();
  void editSelected();
  void removeSelected();
  void testSelected();

 signals:
  // The list after an addition, an edit, a removal or a check box.
  void entriesChanged(const QList<quire::ui::ToolServerEntry>& entries);
  // Connect / Test: start or reach this server now and report its status.
  void testRequested(const quire::ui::ToolServerEntry& entry);

 private:
  QStringList namesExcept(int index) const;
  void announce();
  void rebuildList();
  void fillItem(QTreeWidgetItem* item, int index);
  void refreshButtons();

  QList<ToolServerEntry> entries_;
  QHash<QString, ToolServerStatusView> statuses_;
  EntryEditor editor_;
  bool filling_ = false;  // the list is being filled, not edited
  QTreeWidget* list_ = nullptr;
  QLabel* empty_ = nullptr;
  QPushButton* add_ = nullptr;
  QPushButton* edit_ = nullptr;
  QPushButton* remove_ = nullptr;
  QPushButton* test_ = nullptr;
};

}  // namespace quire::ui
