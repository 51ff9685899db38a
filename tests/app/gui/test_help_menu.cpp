// The Help menu, and the answers `quire --help` and `quire --version` give
// without a display.

#include <QAction>
#include <QDialog>
#include <QDir>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QProcess>
#include <QRegularExpression>
#include <QTableWidget>
#include <QTest>

#include "app_test_support.h"
#include "build_info.h"
#include "help_menu.h"
#include "main_window.h"
#include "test_main.h"

using namespace quire;
using namespace quire::test;

namespace {

QAction* help_action(gui::MainWindow& window, const char* name) {
  QMenu* help = window.helpMenu();
  return help != nullptr ? help->findChild<QAction*>(QString::fromLatin1(name)) : nullptr;
}

// Runs the built program with no display to talk to.
QString run_headless(const QString& argument, int* exit_code) {
  QProcess process;
  QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
  environment.remove(QStringLiteral("QT_QPA_PLATFORM"));
  environment.remove(QStringLiteral("DISPLAY"));
  environment.remove(QStringLiteral("WAYLAND_DISPLAY"));
  process.setProcessEnvironment(environment);
  process.start(QStringLiteral(QUIRE_APP_BINARY), {argument});
  if (!process.waitForFinished(30'000)) return QStringLiteral("did not finish");
  *exit_code = process.exitCode();
  return QString::fromUtf8(process.readAllStandardOutput());
}

}  // namespace

class HelpMenuTest : public QObject {
  Q_OBJECT

 private slots:
  void versionAndHelpNeedNoDisplay() {
    int code = -1;
    const QString version = run_headless(QStringLiteral("--version"), &code);
    QCOMPARE(code, 0);
    // The commit is the program's own: a tree rebuilt in part may hold a test
    // configured at another commit, so only its form is checked here.
    const QRegularExpression form(
        QStringLiteral("^quire %1 \\(commit ([0-9a-f]{7,40}|unknown)\\)\n$")
            .arg(QRegularExpression::escape(QString::fromLatin1(gui::build_version()))));
    QVERIFY2(form.match(version).hasMatch(), qPrintable(version));
    const QString help = run_headless(QStringLiteral("--help"), &code);
    QCOMPARE(code, 0);
    QVERIFY2(help.contains(QStringLiteral("--model <DIR>")) &&
                 help.contains(QStringLiteral("--self-test")) &&
                 help.contains(QStringLiteral("--version")),
             qPrintable(help));
  }

  void theCommitIsKnownInACheckout() {
    // The tests run from a git checkout, where configure reads the commit.
    const QString commit = QString::fromLatin1(gui::build_commit());
    QVERIFY2(commit != QStringLiteral("unknown") && commit.size() >= 7, qPrintable(commit));
  }

  void aboutNamesVersionCommitBackendAndLicenses() {
    AppRun run{QString()};
    run.start();
    gui::MainWindow& window = run.app->window();
    QVERIFY(window.helpMenu());
    QCOMPARE(window.menuBar()->actions().constLast()->menu(), window.helpMenu());
    QAction* about = help_action(window, "aboutAction");
    QVERIFY(about);
    about->trigger();
    auto* dialog = window.findChild<QDialog*>(QStringLiteral("aboutDialog"));
    QVERIFY(dialog && dialog->isVisible());
    const QString text = dialog->findChild<QLabel*>(QStringLiteral("aboutText"))->text();
    QVERIFY2(text.contains(QStringLiteral("Version %1, commit %2.")
                               .arg(QString::fromLatin1(gui::build_version()),
                                    QString::fromLatin1(gui::build_commit()))),
             qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("CUDA backend: not checked yet: no model is loaded.")),
             qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("GNU General Public License version 2 or later")) &&
                 text.contains(QStringLiteral("GCIDE")) &&
                 text.contains(QStringLiteral("BSD license of the University of California")),
             qPrintable(text));
    QVERIFY2(text.contains(QDir(run.data.path()).absolutePath()), qPrintable(text));
    QVERIFY(help_action(window, "dataFolderAction"));
  }

  // The list is read off the window's actions: a new one appears without
  // anyone editing a list of shortcuts.
  void shortcutsComeFromTheWindowsActions() {
    AppRun run{QString()};
    run.start();
    gui::MainWindow& window = run.app->window();
    const QList<gui::ShortcutRow> rows = gui::shortcut_rows(window);
    const gui::ShortcutRow memory{
        QStringLiteral("Memory panel"),
        QKeySequence(QStringLiteral("Ctrl+M")).toString(QKeySequence::NativeText)};
    QVERIFY(rows.contains(memory));

    auto* added = new QAction(QStringLiteral("&Frobnicate…"), &window);
    added->setShortcut(QKeySequence(QStringLiteral("Ctrl+Shift+F")));
    help_action(window, "shortcutsAction")->trigger();
    auto* table = window.findChild<QTableWidget*>(QStringLiteral("shortcutsTable"));
    QVERIFY(table && table->isVisible());
    QCOMPARE(table->rowCount(), rows.size() + 1);
    bool found = false;
    for (int row = 0; row < table->rowCount(); ++row) {
      found = found ||
              (table->item(row, 0)->text() == QStringLiteral("Frobnicate") &&
               table->item(row, 1)->text() ==
                   QKeySequence(QStringLiteral("Ctrl+Shift+F")).toString(QKeySequence::NativeText));
    }
    QVERIFY(found);
  }
};

QUIRE_TEST(HelpMenuTest)
#include "test_help_menu.moc"
