// Settings → Tools: the list of tool servers with their check boxes and
// statuses; Add, Edit and Remove announce the whole list, Connect / Test
// names one server, and entries set by the application are not announced.

#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QTest>
#include <QTreeWidget>
#include <memory>
#include <optional>

#include "quire/ui/tool_servers_panel.h"
#include "settings_fixtures.h"
#include "test_main.h"

using quire::ui::ToolServerEntry;
using quire::ui::ToolServersPanel;
using quire::ui::ToolServerStatusView;
using StatusState = quire::ui::ToolServerStatusView::State;

namespace {

ToolServerEntry program_server(const QString& name) {
  ToolServerEntry entry;
  entry.name = name;
  entry.command = QStringLiteral("npx");
  entry.arguments = {QStringLiteral("-y"),
                     QStringLiteral("@modelcontextprotocol/server-filesystem"),
                     QStringLiteral("/home/ada/My Documents")};
  return entry;
}

ToolServerEntry http_server(const QString& name) {
  ToolServerEntry entry;
  entry.name = name;
  entry.transport = ToolServerEntry::Transport::Http;
  entry.url = QStringLiteral("http://localhost:3000/mcp");
  return entry;
}

}  // namespace

class TestToolServersPanel : public QObject {
  Q_OBJECT

 private slots:
  void init() {
    panel_ = std::make_unique<ToolServersPanel>();
    // The editor stands in for the dialog: it records what it was asked and
    // answers with `answer_`.
    panel_->setEntryEditor([this](QWidget*, const ToolServerEntry& start,
                                  const QStringList& taken) -> std::optional<ToolServerEntry> {
      asked_start_ = start;
      asked_taken_ = taken;
      return answer_;
    });
  }
  void cleanup() {
    panel_.reset();
    answer_.reset();
  }

  void explainsThatNothingRunsUnlessAddedHere() {
    QCOMPARE(child<QLabel>("toolServersExplanation")->text(),
             QStringLiteral("Tool servers (MCP) give the model tools, such as reading files or "
                            "searching the web. They run only when you add them here, and every "
                            "call the model makes waits for your approval in the chat."));
    QVERIFY(panel_->entries().isEmpty());
    QVERIFY(!child<QLabel>("toolServersEmpty")->isHidden());
    QVERIFY(child<QTreeWidget>("toolServerList")->isHidden());
    QVERIFY(child<QPushButton>("addToolServer")->isEnabled());
    for (const char* name : {"editToolServer", "removeToolServer", "testToolServer"})
      QVERIFY2(!child<QPushButton>(name)->isEnabled(), name);
  }

  void entriesSetByTheApplicationShowWithoutAnnouncement() {
    QSignalSpy changed(panel_.get(), &ToolServersPanel::entriesChanged);
    ToolServerEntry off = http_server(QStringLiteral("search"));
    off.enabled = false;
    panel_->setEntries({program_server(QStringLiteral("files")), off});
    QCOMPARE(changed.count(), 0);
    QCOMPARE(panel_->entries().size(), 2);
    QTreeWidget* list = child<QTreeWidget>("toolServerList");
    QCOMPARE(list->topLevelItemCount(), 2);
    QVERIFY(child<QLabel>("toolServersEmpty")->isHidden());
    QCOMPARE(row(0, ToolServersPanel::NameColumn), QStringLiteral("files"));
    QCOMPARE(row(0, ToolServersPanel::TargetColumn),
             QStringLiteral("npx -y @modelcontextprotocol/server-filesystem '/home/ada/My "
                            "Documents'"));
    QCOMPARE(row(0, ToolServersPanel::StatusColumn), QStringLiteral("Not connected yet"));
    QCOMPARE(list->topLevelItem(0)->checkState(0), Qt::Checked);
    QCOMPARE(row(1, ToolServersPanel::TargetColumn), QStringLiteral("http://localhost:3000/mcp"));
    QCOMPARE(row(1, ToolServersPanel::StatusColumn), QStringLiteral("Off"));
    QCOMPARE(list->topLevelItem(1)->checkState(0), Qt::Unchecked);
  }

  void statusesAreTheApplicationsWords() {
    panel_->setEntries(
        {program_server(QStringLiteral("files")), http_server(QStringLiteral("web"))});
    panel_->setStatus(QStringLiteral("files"),
                      {StatusState::Connected, QStringLiteral("Connected · 5 tools")});
    panel_->setStatus(
        QStringLiteral("web"),
        {StatusState::Failed, QStringLiteral("Failed: the process exited with code 3")});
    panel_->setStatus(QStringLiteral("unknown"), {StatusState::Connected, QStringLiteral("x")});
    QCOMPARE(row(0, ToolServersPanel::StatusColumn), QStringLiteral("Connected · 5 tools"));
    QCOMPARE(row(1, ToolServersPanel::StatusColumn),
             QStringLiteral("Failed: the process exited with code 3"));
    QTreeWidget* list = child<QTreeWidget>("toolServerList");
    // A failure is red; a connected server keeps the list's colour.
    QCOMPARE(list->topLevelItem(1)->foreground(ToolServersPanel::StatusColumn).color(),
             QColor(0xc6, 0x28, 0x28));
    QCOMPARE(list->topLevelItem(0)->foreground(ToolServersPanel::StatusColumn).style(),
             Qt::NoBrush);
    QCOMPARE(panel_->status(QStringLiteral("unknown")), ToolServerStatusView{});
    panel_->resize(720, 300);
    panel_->show();
    QVERIFY(QTest::qWaitForWindowExposed(panel_.get()));
    quire::ui::test::save_screenshot(*panel_, QStringLiteral("tool_servers_panel.png"));
    // A server no longer listed loses its status.
    panel_->setEntries({program_server(QStringLiteral("files"))});
    QCOMPARE(panel_->status(QStringLiteral("web")), ToolServerStatusView{});
    QCOMPARE(panel_->status(QStringLiteral("files")).text, QStringLiteral("Connected · 5 tools"));
  }

  void addAnnouncesTheListWithTheNewServer() {
    panel_->setEntries({program_server(QStringLiteral("files"))});
    QSignalSpy changed(panel_.get(), &ToolServersPanel::entriesChanged);
    answer_ = http_server(QStringLiteral("web"));
    QTest::mouseClick(child<QPushButton>("addToolServer"), Qt::LeftButton);
    // The editor started from a default entry and knew the names in use.
    QCOMPARE(asked_start_, ToolServerEntry{});
    QCOMPARE(asked_taken_, QStringList{QStringLiteral("files")});
    QCOMPARE(changed.count(), 1);
    const QList<ToolServerEntry> expected{program_server(QStringLiteral("files")), *answer_};
    QCOMPARE(changed.at(0).at(0).value<QList<ToolServerEntry>>(), expected);
    QCOMPARE(panel_->entries(), expected);
    // The new server is selected, ready for Connect / Test.
    QCOMPARE(panel_->selectedIndex(), 1);
  }

  void cancellingTheEditorChangesNothing() {
    panel_->setEntries({program_server(QStringLiteral("files"))});
    QSignalSpy changed(panel_.get(), &ToolServersPanel::entriesChanged);
    panel_->addServer();
    panel_->selectServer(QStringLiteral("files"));
    panel_->editSelected();
    QCOMPARE(changed.count(), 0);
    QCOMPARE(panel_->entries().size(), 1);
  }

  void editReplacesTheSelectedServer() {
    panel_->setEntries(
        {program_server(QStringLiteral("files")), http_server(QStringLiteral("web"))});
    panel_->setStatus(QStringLiteral("web"), {StatusState::Connected, QStringLiteral("Connected")});
    QSignalSpy changed(panel_.get(), &ToolServersPanel::entriesChanged);
    QVERIFY(!child<QPushButton>("editToolServer")->isEnabled());
    panel_->selectServer(QStringLiteral("web"));
    QVERIFY(child<QPushButton>("editToolServer")->isEnabled());
    ToolServerEntry edited = http_server(QStringLiteral("web search"));
    edited.call_timeout_seconds = 15;
    answer_ = edited;
    QTest::mouseClick(child<QPushButton>("editToolServer"), Qt::LeftButton);
    QCOMPARE(asked_start_, http_server(QStringLiteral("web")));
    QCOMPARE(asked_taken_, QStringList{QStringLiteral("files")});
    QCOMPARE(changed.count(), 1);
    QCOMPARE(changed.at(0).at(0).value<QList<ToolServerEntry>>(),
             (QList<ToolServerEntry>{program_server(QStringLiteral("files")), edited}));
    QCOMPARE(row(1, ToolServersPanel::NameColumn), QStringLiteral("web search"));
    // The server restarts with its new settings: the old status is gone.
    QCOMPARE(row(1, ToolServersPanel::StatusColumn), QStringLiteral("Not connected yet"));

    // An edit that changes nothing announces nothing.
    panel_->editSelected();
    QCOMPARE(changed.count(), 1);
  }

  void removeTakesTheSelectedServer() {
    panel_->setEntries({program_server(QStringLiteral("a")), program_server(QStringLiteral("b")),
                        program_server(QStringLiteral("c"))});
    QSignalSpy changed(panel_.get(), &ToolServersPanel::entriesChanged);
    panel_->selectServer(QStringLiteral("b"));
    QTest::mouseClick(child<QPushButton>("removeToolServer"), Qt::LeftButton);
    QCOMPARE(changed.count(), 1);
    QCOMPARE(changed.at(0).at(0).value<QList<ToolServerEntry>>(),
             (QList<ToolServerEntry>{program_server(QStringLiteral("a")),
                                     program_server(QStringLiteral("c"))}));
    // The next row is selected: Remove again takes "c".
    QCOMPARE(panel_->selectedIndex(), 1);
    QTest::mouseClick(child<QPushButton>("removeToolServer"), Qt::LeftButton);
    QTest::mouseClick(child<QPushButton>("removeToolServer"), Qt::LeftButton);
    QCOMPARE(changed.count(), 3);
    QVERIFY(panel_->entries().isEmpty());
    QVERIFY(!child<QLabel>("toolServersEmpty")->isHidden());
    QVERIFY(!child<QPushButton>("removeToolServer")->isEnabled());
  }

  void theCheckBoxTurnsAServerOffAndOn() {
    panel_->setEntries({program_server(QStringLiteral("files"))});
    panel_->setStatus(QStringLiteral("files"),
                      {StatusState::Connected, QStringLiteral("Connected · 5 tools")});
    QSignalSpy changed(panel_.get(), &ToolServersPanel::entriesChanged);
    QTreeWidgetItem* item = child<QTreeWidget>("toolServerList")->topLevelItem(0);
    item->setCheckState(0, Qt::Unchecked);
    QCOMPARE(changed.count(), 1);
    ToolServerEntry off = program_server(QStringLiteral("files"));
    off.enabled = false;
    QCOMPARE(changed.at(0).at(0).value<QList<ToolServerEntry>>(), QList<ToolServerEntry>{off});
    QCOMPARE(row(0, ToolServersPanel::StatusColumn), QStringLiteral("Off"));
    item->setCheckState(0, Qt::Checked);
    QCOMPARE(changed.count(), 2);
    QVERIFY(panel_->entries().at(0).enabled);
  }

  void theCheckBoxAnswersTheSpaceBar() {
    panel_->setEntries({program_server(QStringLiteral("files"))});
    QSignalSpy changed(panel_.get(), &ToolServersPanel::entriesChanged);
    panel_->show();
    QTreeWidget* list = child<QTreeWidget>("toolServerList");
    panel_->selectServer(QStringLiteral("files"));
    list->setFocus();
    QTest::keyClick(list->viewport(), Qt::Key_Space);
    QCOMPARE(changed.count(), 1);
    QVERIFY(!panel_->entries().at(0).enabled);
  }

  void connectTestNamesTheSelectedServer() {
    panel_->setEntries(
        {program_server(QStringLiteral("files")), http_server(QStringLiteral("web"))});
    QSignalSpy test(panel_.get(), &ToolServersPanel::testRequested);
    QSignalSpy changed(panel_.get(), &ToolServersPanel::entriesChanged);
    QVERIFY(!child<QPushButton>("testToolServer")->isEnabled());
    panel_->selectServer(QStringLiteral("web"));
    QCOMPARE(child<QPushButton>("testToolServer")->text(), QStringLiteral("Connect / Test"));
    QTest::mouseClick(child<QPushButton>("testToolServer"), Qt::LeftButton);
    QCOMPARE(test.count(), 1);
    QCOMPARE(test.at(0).at(0).value<ToolServerEntry>(), http_server(QStringLiteral("web")));
    QCOMPARE(changed.count(), 0);
  }

 private:
  template <typename T>
  T* child(const char* name) const {
    T* found = panel_->findChild<T*>(QLatin1String(name));
    if (!found) qFatal("no child %s", name);
    return found;
  }
  QString row(int index, int column) const {
    return child<QTreeWidget>("toolServerList")->topLevelItem(index)->text(column);
  }

  std::unique_ptr<ToolServersPanel> panel_;
  std::optional<ToolServerEntry> answer_;
  ToolServerEntry asked_start_;
  QStringList asked_taken_;
};

QUIRE_TEST(TestToolServersPanel)
#include "test_tool_servers_panel.moc"
