#include "quire/ui/tool_servers_panel.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <algorithm>

#include "quire/ui/tool_server_dialog.h"

namespace quire::ui {
namespace {

// The same red as the settings' other problems.
const QColor kFailedColor(0xc6, 0x28, 0x28);

// "npx -y @scope/server '/home/me/My Documents'": how the program is started,
// arguments with spaces quoted so that the line reads as one command.
QString command_line(const ToolServerEntry& entry) {
  QStringList parts{entry.command};
  for (const QString& argument : entry.arguments) {
    parts << (argument.contains(u' ') ? u'\'' + argument + u'\'' : argument);
  }
  return parts.join(u' ');
}

}  // namespace

ToolServersPanel::ToolServersPanel(QWidget* parent) : QGroupBox(tr("Tools"), parent) {
  setObjectName(QStringLiteral("toolServersPanel"));
  auto* layout = new QVBoxLayout(this);

  auto* explanation = new QLabel(
      tr("Tool servers (MCP) give the model tools, such as reading files or searching the web. "
         "They run only when you add them here, and every call the model makes waits for your "
         "approval in the chat."),
      this);
  explanation->setObjectName(QStringLiteral("toolServersExplanation"));
  explanation->setWordWrap(true);
  layout->addWidget(explanation);

  list_ = new QTreeWidget(this);
  list_->setObjectName(QStringLiteral("toolServerList"));
  list_->setAccessibleName(tr("Tool servers"));
  list_->setColumnCount(3);
  list_->setHeaderLabels({tr("Server"), tr("Connects to"), tr("Status")});
  list_->setRootIsDecorated(false);
  list_->setUniformRowHeights(true);
  list_->setSelectionMode(QAbstractItemView::SingleSelection);
  // The name as long as it is; the command line or address and the status
  // share the rest, and show whole in their tooltips when cut short.
  list_->header()->setStretchLastSection(false);
  list_->header()->setSectionResizeMode(NameColumn, QHeaderView::ResizeToContents);
  list_->header()->setSectionResizeMode(TargetColumn, QHeaderView::Stretch);
  list_->header()->setSectionResizeMode(StatusColumn, QHeaderView::Stretch);
  list_->setMinimumHeight(120);
  layout->addWidget(list_);

  empty_ = new QLabel(tr("No tool servers yet. Add one to let the model use its tools."), this);
  empty_->setObjectName(QStringLiteral("toolServersEmpty"));
  empty_->setWordWrap(true);
  empty_->setForegroundRole(QPalette::PlaceholderText);
  layout->addWidget(empty_);

  auto* buttons = new QHBoxLayout;
  add_ = new QPushButton(tr("Add…"), this);
  add_->setObjectName(QStringLiteral("addToolServer"));
  edit_ = new QPushButton(tr("Edit…"), this);
  edit_->setObjectName(QStringLiteral("editToolServer"));
  remove_ = new QPushButton(tr("Remove"), this);
  remove_->setObjectName(QStringLiteral("removeToolServer"));
  test_ = new QPushButton(tr("Connect / Test"), this);
  test_->setObjectName(QStringLiteral("testToolServer"));
  test_->setToolTip(
      tr("Start or reach the selected server now and list its tools, to see that "
         "it works"));
  for (QPushButton* button : {add_, edit_, remove_, test_}) {
    button->setAutoDefault(false);
    buttons->addWidget(button);
  }
  buttons->addStretch(1);
  layout->addLayout(buttons);

  editor_ = [](QWidget* owner, const ToolServerEntry& start, const QStringList& taken) {
    ToolServerDialog dialog(start, taken, owner);
    return dialog.exec() == QDialog::Accepted ? std::optional(dialog.entry()) : std::nullopt;
  };

  connect(add_, &QPushButton::clicked, this, &ToolServersPanel::addServer);
  connect(edit_, &QPushButton::clicked, this, &ToolServersPanel::editSelected);
  connect(remove_, &QPushButton::clicked, this, &ToolServersPanel::removeSelected);
  connect(test_, &QPushButton::clicked, this, &ToolServersPanel::testSelected);
  // Double-click or Enter on a row edits it.
  connect(list_, &QTreeWidget::itemActivated, this, &ToolServersPanel::editSelected);
  connect(list_, &QTreeWidget::itemSelectionChanged, this, &ToolServersPanel::refreshButtons);
  connect(list_, &QTreeWidget::itemChanged, this, [this](QTreeWidgetItem* item, int column) {
    if (filling_ || column != NameColumn) return;
    const int index = list_->indexOfTopLevelItem(item);
    if (index < 0) return;
    const bool enabled = item->checkState(NameColumn) == Qt::Checked;
    ToolServerEntry& entry = entries_[index];
    if (entry.enabled == enabled) return;
    entry.enabled = enabled;
    // What was reported belongs to the server before the switch.
    statuses_.remove(entry.name);
    fillItem(item, index);
    announce();
  });
  rebuildList();
}

void ToolServersPanel::setEntries(const QList<ToolServerEntry>& entries) {
  entries_ = entries;
  QHash<QString, ToolServerStatusView> kept;
  for (const ToolServerEntry& entry : entries_) {
    if (statuses_.contains(entry.name)) kept.insert(entry.name, statuses_.value(entry.name));
  }
  statuses_ = kept;
  rebuildList();
}

void ToolServersPanel::setStatus(const QString& name, const ToolServerStatusView& status) {
  for (int i = 0; i < entries_.size(); ++i) {
    if (entries_[i].name != name) continue;
    statuses_.insert(name, status);
    fillItem(list_->topLevelItem(i), i);
    return;
  }
}

void ToolServersPanel::selectServer(const QString& name) {
  for (int i = 0; i < entries_.size(); ++i) {
    if (entries_[i].name == name) list_->setCurrentItem(list_->topLevelItem(i));
  }
}

int ToolServersPanel::selectedIndex() const {
  const QList<QTreeWidgetItem*> selected = list_->selectedItems();
  return selected.isEmpty() ? -1 : list_->indexOfTopLevelItem(selected.first());
}

void ToolServersPanel::setEntryEditor(EntryEditor editor) {
  editor_ = std::move(editor);
}

QStringList ToolServersPanel::namesExcept(int index) const {
  QStringList names;
  for (int i = 0; i < entries_.size(); ++i) {
    if (i != index) names << entries_[i].name;
  }
  return names;
}

void ToolServersPanel::addServer() {
  if (!editor_) return;
  const std::optional<ToolServerEntry> added = editor_(this, ToolServerEntry{}, namesExcept(-1));
  if (!added) return;
  entries_.append(*added);
  rebuildList();
  list_->setCurrentItem(list_->topLevelItem(static_cast<int>(entries_.size()) - 1));
  announce();
}

void ToolServersPanel::editSelected() {
  const int index = selectedIndex();
  if (index < 0 || !editor_) return;
  const std::optional<ToolServerEntry> edited = editor_(this, entries_[index], namesExcept(index));
  if (!edited || *edited == entries_[index]) return;
  // The server restarts with its new settings; its old status is stale.
  statuses_.remove(entries_[index].name);
  entries_[index] = *edited;
  fillItem(list_->topLevelItem(index), index);
  announce();
}

void ToolServersPanel::removeSelected() {
  const int index = selectedIndex();
  if (index < 0) return;
  statuses_.remove(entries_[index].name);
  entries_.removeAt(index);
  rebuildList();
  // The next row takes the removed one's place, so a list can be cleared
  // by pressing Remove repeatedly.
  if (!entries_.isEmpty()) {
    const int next = std::min(index, static_cast<int>(entries_.size()) - 1);
    list_->setCurrentItem(list_->topLevelItem(next));
  }
  announce();
}

void ToolServersPanel::testSelected() {
  const int index = selectedIndex();
  if (index >= 0) emit testRequested(entries_[index]);
}

void ToolServersPanel::announce() {
  refreshButtons();
  emit entriesChanged(entries_);
}

void ToolServersPanel::rebuildList() {
  filling_ = true;
  list_->clear();
  for (int i = 0; i < entries_.size(); ++i) {
    auto* item = new QTreeWidgetItem(list_);
    item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemIsUserCheckable);
    fillItem(item, i);
  }
  filling_ = false;
  list_->setVisible(!entries_.isEmpty());
  empty_->setVisible(entries_.isEmpty());
  refreshButtons();
}

void ToolServersPanel::fillItem(QTreeWidgetItem* item, int index) {
  const bool was_filling = filling_;
  filling_ = true;
  const ToolServerEntry& entry = entries_[index];
  item->setText(NameColumn, entry.name);
  item->setCheckState(NameColumn, entry.enabled ? Qt::Checked : Qt::Unchecked);
  item->setToolTip(NameColumn, entry.enabled ? tr("On: its tools are offered to the model")
                                             : tr("Off: kept here, not started"));
  const bool http = entry.transport == ToolServerEntry::Transport::Http;
  item->setText(TargetColumn, http ? entry.url : command_line(entry));
  item->setToolTip(TargetColumn, item->text(TargetColumn));

  const auto reported = statuses_.constFind(entry.name);
  QString status;
  if (reported != statuses_.cend())
    status = reported->text;
  else
    status = entry.enabled ? tr("Not connected yet") : tr("Off");
  const bool failed =
      reported != statuses_.cend() && reported->state == ToolServerStatusView::State::Failed;
  item->setText(StatusColumn, status);
  item->setToolTip(StatusColumn, status);
  item->setForeground(StatusColumn, failed ? QBrush(kFailedColor) : QBrush());
  filling_ = was_filling;
}

void ToolServersPanel::refreshButtons() {
  const bool selected = selectedIndex() >= 0;
  edit_->setEnabled(selected);
  remove_->setEnabled(selected);
  test_->setEnabled(selected);
}

}  // namespace quire::ui
