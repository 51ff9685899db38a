// One tool server's settings: the lines of environment variables and headers
// read into values, the checks that keep an entry from being saved, and the
// dialog that shows them under their fields as they are typed.

#include <QComboBox>
#include <QDir>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>

#include "quire/ui/tool_server_dialog.h"
#include "quire/ui/tool_server_settings.h"
#include "settings_fixtures.h"
#include "test_main.h"

using quire::ui::ToolServerDialog;
using quire::ui::ToolServerEntry;
using quire::ui::ToolServerIssue;
using Field = quire::ui::ToolServerIssue::Field;
using Transport = quire::ui::ToolServerEntry::Transport;
using NamedValue = quire::ui::ToolServerEntry::NamedValue;

namespace {

ToolServerEntry filesystem_server() {
  ToolServerEntry entry;
  entry.name = QStringLiteral("files");
  entry.command = QStringLiteral("npx");
  entry.arguments = {QStringLiteral("-y"),
                     QStringLiteral("@modelcontextprotocol/server-filesystem"),
                     QStringLiteral("/home/ada/My Documents")};
  entry.environment = {{QStringLiteral("NODE_ENV"), QStringLiteral("production")}};
  return entry;
}

ToolServerEntry http_server() {
  ToolServerEntry entry;
  entry.name = QStringLiteral("search");
  entry.transport = Transport::Http;
  entry.url = QStringLiteral("https://tools.example.org/mcp");
  entry.headers = {{QStringLiteral("Authorization"), QStringLiteral("Bearer abc123")}};
  return entry;
}

QList<Field> fields_of(const QList<ToolServerIssue>& issues) {
  QList<Field> fields;
  for (const ToolServerIssue& issue : issues)
    fields << issue.field;
  return fields;
}

}  // namespace

class TestToolServerSettings : public QObject {
  Q_OBJECT

 private slots:
  void environmentLinesAreReadIntoVariables() {
    const auto parsed = quire::ui::parse_environment_lines(
        QStringLiteral("API_KEY=s3cr=t\n\n  ROOT = /srv/data  \nBROKEN\nMY VAR=1"));
    QCOMPARE(parsed.values,
             (QList<NamedValue>{{QStringLiteral("API_KEY"), QStringLiteral("s3cr=t")},
                                {QStringLiteral("ROOT"), QStringLiteral("/srv/data")}}));
    QCOMPARE(parsed.problems,
             (QStringList{QStringLiteral("Line 4, “BROKEN”: write each variable as NAME=value."),
                          QStringLiteral("Line 5: “MY VAR” is no variable name; names have no "
                                         "spaces.")}));
    QCOMPARE(quire::ui::environment_lines(parsed.values),
             QStringLiteral("API_KEY=s3cr=t\nROOT=/srv/data"));
  }

  void headerLinesAreReadIntoHeaders() {
    const auto parsed = quire::ui::parse_header_lines(
        QStringLiteral("Authorization: Bearer a:b\nX-Trace-Id:42\nno colon here\nBad Name: x"));
    QCOMPARE(parsed.values,
             (QList<NamedValue>{{QStringLiteral("Authorization"), QStringLiteral("Bearer a:b")},
                                {QStringLiteral("X-Trace-Id"), QStringLiteral("42")}}));
    QCOMPARE(parsed.problems,
             (QStringList{QStringLiteral("Line 3, “no colon here”: write each header as "
                                         "Name: value."),
                          QStringLiteral("Line 4: “Bad Name” is no header name; use letters, "
                                         "digits and - only.")}));
    QCOMPARE(quire::ui::header_lines(parsed.values),
             QStringLiteral("Authorization: Bearer a:b\nX-Trace-Id: 42"));
  }

  void transportsHaveIds() {
    QCOMPARE(quire::ui::transport_id(Transport::Stdio), QStringLiteral("stdio"));
    QCOMPARE(quire::ui::transport_id(Transport::Http), QStringLiteral("http"));
    bool ok = false;
    QCOMPARE(quire::ui::parse_transport(QStringLiteral("http"), &ok), Transport::Http);
    QVERIFY(ok);
    QCOMPARE(quire::ui::parse_transport(QStringLiteral("websocket"), &ok), Transport::Stdio);
    QVERIFY(!ok);
  }

  void validEntriesPass() {
    QCOMPARE(quire::ui::validate_tool_server(filesystem_server(), {QStringLiteral("search")}),
             QList<ToolServerIssue>{});
    QCOMPARE(quire::ui::validate_tool_server(http_server(), {QStringLiteral("files")}),
             QList<ToolServerIssue>{});
  }

  void problemsAreNamedByField_data() {
    QTest::addColumn<ToolServerEntry>("entry");
    QTest::addColumn<QStringList>("taken");
    QTest::addColumn<ToolServerIssue>("issue");

    ToolServerEntry unnamed = filesystem_server();
    unnamed.name = QStringLiteral("  ");
    QTest::newRow("empty name") << unnamed << QStringList()
                                << ToolServerIssue{
                                       Field::Name,
                                       QStringLiteral(
                                           "Give the server a name; the chat shows it with its "
                                           "tools.")};
    QTest::newRow("duplicate name, other case")
        << filesystem_server() << QStringList{QStringLiteral("Files")}
        << ToolServerIssue{Field::Name,
                           QStringLiteral("Another server is already called “files”.")};

    ToolServerEntry no_command = filesystem_server();
    no_command.command = QString();
    QTest::newRow("no program") << no_command << QStringList()
                                << ToolServerIssue{
                                       Field::Command,
                                       QStringLiteral(
                                           "Enter the program that starts the server, such as npx, "
                                           "uvx or the path of its executable.")};

    ToolServerEntry no_folder = filesystem_server();
    no_folder.working_directory = QStringLiteral("/no/such/folder/anywhere");
    QTest::newRow("missing folder")
        << no_folder << QStringList()
        << ToolServerIssue{Field::WorkingDirectory,
                           QStringLiteral("There is no folder at “/no/such/folder/anywhere”.")};

    const QString url_problem = QStringLiteral(
        "The address must start with http:// or https:// and name a host, such as "
        "http://localhost:3000/mcp.");
    ToolServerEntry ftp = http_server();
    ftp.url = QStringLiteral("ftp://tools.example.org/mcp");
    QTest::newRow("not http") << ftp << QStringList() << ToolServerIssue{Field::Url, url_problem};
    ToolServerEntry bare = http_server();
    bare.url = QStringLiteral("localhost:3000");
    QTest::newRow("no scheme") << bare << QStringList() << ToolServerIssue{Field::Url, url_problem};
    ToolServerEntry hostless = http_server();
    hostless.url = QStringLiteral("http://");
    QTest::newRow("no host") << hostless << QStringList()
                             << ToolServerIssue{Field::Url, url_problem};
    ToolServerEntry no_url = http_server();
    no_url.url = QString();
    QTest::newRow("no address") << no_url << QStringList()
                                << ToolServerIssue{
                                       Field::Url,
                                       QStringLiteral("Enter the server's address, such as "
                                                      "http://localhost:3000/mcp.")};
    ToolServerEntry bad_header = http_server();
    bad_header.headers = {{QStringLiteral("X Token"), QStringLiteral("1")}};
    QTest::newRow("bad header name")
        << bad_header << QStringList()
        << ToolServerIssue{Field::Headers,
                           QStringLiteral("“X Token” is no header name; use letters, digits and - "
                                          "only.")};
  }

  void problemsAreNamedByField() {
    QFETCH(ToolServerEntry, entry);
    QFETCH(QStringList, taken);
    QFETCH(ToolServerIssue, issue);
    QCOMPARE(quire::ui::validate_tool_server(entry, taken), QList<ToolServerIssue>{issue});
  }

  void onlyTheChosenTransportIsChecked() {
    // A stdio server keeps an address typed earlier, and an HTTP one its program.
    ToolServerEntry entry = filesystem_server();
    entry.url = QStringLiteral("not an address");
    QCOMPARE(quire::ui::validate_tool_server(entry, {}), QList<ToolServerIssue>{});
    entry = http_server();
    entry.command = QString();
    entry.working_directory = QStringLiteral("/no/such/folder");
    QCOMPARE(quire::ui::validate_tool_server(entry, {}), QList<ToolServerIssue>{});
  }
};

class TestToolServerDialog : public QObject {
  Q_OBJECT

 private slots:
  void showsAnEntryAndReadsItBack() {
    ToolServerEntry entry = filesystem_server();
    entry.enabled = false;
    entry.call_timeout_seconds = 90;
    entry.url = QStringLiteral("http://kept.example");
    ToolServerDialog dialog(entry, {QStringLiteral("search")});
    QCOMPARE(dialog.windowTitle(), QStringLiteral("Edit tool server"));
    QCOMPARE(child<QLineEdit>(dialog, "toolServerName")->text(), QStringLiteral("files"));
    QCOMPARE(child<QPlainTextEdit>(dialog, "toolServerArguments")->toPlainText(),
             QStringLiteral("-y\n@modelcontextprotocol/server-filesystem\n/home/ada/My Documents"));
    QCOMPARE(child<QPlainTextEdit>(dialog, "toolServerEnvironment")->toPlainText(),
             QStringLiteral("NODE_ENV=production"));
    QCOMPARE(child<QSpinBox>(dialog, "toolServerTimeout")->value(), 90);
    // What has no field (enabled) and the other transport's fields are kept.
    QCOMPARE(dialog.entry(), entry);
    QVERIFY(dialog.issues().isEmpty());
    QVERIFY(child<QPushButton>(dialog, "toolServerSave")->isEnabled());
  }

  void aNewServerStartsAsAProgramWithTheDefaultTimeout() {
    ToolServerDialog dialog(ToolServerEntry{}, {});
    QCOMPARE(dialog.windowTitle(), QStringLiteral("Add a tool server"));
    QCOMPARE(child<QComboBox>(dialog, "toolServerTransport")->currentData().toString(),
             QStringLiteral("stdio"));
    QCOMPARE(child<QSpinBox>(dialog, "toolServerTimeout")->value(), 60);
    QCOMPARE(child<QSpinBox>(dialog, "toolServerTimeout")->maximum(), 3600);
    QCOMPARE(fields_of(dialog.issues()), (QList<Field>{Field::Name, Field::Command}));
    QVERIFY(!child<QPushButton>(dialog, "toolServerSave")->isEnabled());
  }

  void problemsShowUnderTheirFieldsAsTyped() {
    ToolServerDialog dialog(filesystem_server(), {QStringLiteral("search")});
    dialog.show();
    auto* name = child<QLineEdit>(dialog, "toolServerName");
    name->setText(QStringLiteral("Search"));
    QCOMPARE(issue(dialog, "toolServerNameIssue"),
             QStringLiteral("Another server is already called “Search”."));
    QVERIFY(!child<QPushButton>(dialog, "toolServerSave")->isEnabled());
    name->setText(QStringLiteral("files"));
    QVERIFY(!child<QLabel>(dialog, "toolServerNameIssue")->isVisible());

    child<QLineEdit>(dialog, "toolServerCommand")->clear();
    QCOMPARE(issue(dialog, "toolServerCommandIssue"),
             QStringLiteral("Enter the program that starts the server, such as npx, uvx or the "
                            "path of its executable."));
    child<QLineEdit>(dialog, "toolServerCommand")->setText(QStringLiteral("uvx"));
    child<QPlainTextEdit>(dialog, "toolServerEnvironment")
        ->setPlainText(QStringLiteral("TOKEN=1\nTOKEN 2"));
    QCOMPARE(issue(dialog, "toolServerEnvironmentIssue"),
             QStringLiteral("Line 2, “TOKEN 2”: write each variable as NAME=value."));
    quire::ui::test::save_screenshot(dialog, QStringLiteral("tool_server_dialog_program.png"));
    QVERIFY(!child<QPushButton>(dialog, "toolServerSave")->isEnabled());
    child<QPlainTextEdit>(dialog, "toolServerEnvironment")->setPlainText(QStringLiteral("TOKEN=1"));
    QVERIFY(child<QPushButton>(dialog, "toolServerSave")->isEnabled());
  }

  void anHttpServerAsksForAnAddressAndHeaders() {
    ToolServerDialog dialog(filesystem_server(), {});
    dialog.show();
    auto* transport = child<QComboBox>(dialog, "toolServerTransport");
    transport->setCurrentIndex(transport->findData(QStringLiteral("http")));
    QVERIFY(!child<QLineEdit>(dialog, "toolServerCommand")->isVisible());
    QVERIFY(child<QLineEdit>(dialog, "toolServerUrl")->isVisible());
    QCOMPARE(issue(dialog, "toolServerUrlIssue"),
             QStringLiteral("Enter the server's address, such as http://localhost:3000/mcp."));

    child<QLineEdit>(dialog, "toolServerUrl")->setText(QStringLiteral("file:///tmp/socket"));
    QCOMPARE(issue(dialog, "toolServerUrlIssue"),
             QStringLiteral("The address must start with http:// or https:// and name a host, "
                            "such as http://localhost:3000/mcp."));
    child<QLineEdit>(dialog, "toolServerUrl")
        ->setText(QStringLiteral(" http://localhost:3000/mcp "));
    child<QPlainTextEdit>(dialog, "toolServerHeaders")
        ->setPlainText(QStringLiteral("Authorization Bearer x"));
    QCOMPARE(issue(dialog, "toolServerHeadersIssue"),
             QStringLiteral("Line 1, “Authorization Bearer x”: write each header as Name: value."));
    quire::ui::test::save_screenshot(dialog, QStringLiteral("tool_server_dialog_http.png"));
    QVERIFY(!child<QPushButton>(dialog, "toolServerSave")->isEnabled());
    child<QPlainTextEdit>(dialog, "toolServerHeaders")
        ->setPlainText(QStringLiteral("Authorization: Bearer x"));
    QVERIFY(dialog.issues().isEmpty());

    ToolServerEntry expected = filesystem_server();
    expected.transport = Transport::Http;
    expected.url = QStringLiteral("http://localhost:3000/mcp");
    expected.headers = {{QStringLiteral("Authorization"), QStringLiteral("Bearer x")}};
    QCOMPARE(dialog.entry(), expected);
  }

  void anExistingWorkingFolderPasses() {
    QTemporaryDir folder;
    QVERIFY(folder.isValid());
    ToolServerDialog dialog(filesystem_server(), {});
    child<QLineEdit>(dialog, "toolServerWorkingDirectory")->setText(folder.path());
    QVERIFY(dialog.issues().isEmpty());
    QCOMPARE(dialog.entry().working_directory, folder.path());
    child<QLineEdit>(dialog, "toolServerWorkingDirectory")
        ->setText(folder.path() + QStringLiteral("/missing"));
    QCOMPARE(fields_of(dialog.issues()), QList<Field>{Field::WorkingDirectory});
  }

  void saveAcceptsOnlyAnEntryWithoutProblems() {
    ToolServerDialog dialog(ToolServerEntry{}, {});
    dialog.show();
    child<QLineEdit>(dialog, "toolServerName")->setText(QStringLiteral("git"));
    child<QLineEdit>(dialog, "toolServerCommand")->setText(QStringLiteral("uvx"));
    child<QPlainTextEdit>(dialog, "toolServerArguments")
        ->setPlainText(QStringLiteral("mcp-server-git\n\n--repository\n/src/quire\n"));
    QTest::mouseClick(child<QPushButton>(dialog, "toolServerSave"), Qt::LeftButton);
    QCOMPARE(dialog.result(), int(QDialog::Accepted));
    QCOMPARE(dialog.entry().arguments,
             (QStringList{QStringLiteral("mcp-server-git"), QStringLiteral("--repository"),
                          QStringLiteral("/src/quire")}));
  }

 private:
  template <typename T>
  static T* child(const QWidget& parent, const char* name) {
    T* found = parent.findChild<T*>(QLatin1String(name));
    if (!found) qFatal("no child %s", name);
    return found;
  }
  static QString issue(const QWidget& dialog, const char* name) {
    auto* label = child<QLabel>(dialog, name);
    return label->isVisible() ? label->text() : QString();
  }
};

QUIRE_TEST(TestToolServerSettings)
QUIRE_TEST(TestToolServerDialog)
#include "test_tool_server_dialog.moc"
