// Small things a new user met in the first hour: a message cannot be sent
// with no model loaded (the box says why), and the import dialog opens in
// the Documents folder rather than offering "Documents" as a file name.

#include <QAction>
#include <QDir>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTest>

#include "app_test_support.h"
#include "chat_controller.h"
#include "main_window.h"
#include "quire/ui/input_box.h"
#include "test_main.h"

using namespace quire;
using namespace quire::test;

class FirstHourDetailsTest : public QObject {
  Q_OBJECT

 private slots:
  void nothingIsSentWithNoModelAndTheBoxSaysWhy() {
    AppRun run{QString()};
    run.start();
    gui::MainWindow& window = run.app->window();
    window.show();
    window.showChat();
    ui::InputBox& input = *window.input();
    const QString reason = QStringLiteral(
        "Load a model to chat: Model → Open a model folder (Ctrl+O) or Get models (Ctrl+Shift+G)");
    QCOMPARE(input.unavailableReason(), reason);
    auto* editor = input.findChild<QPlainTextEdit*>(QStringLiteral("messageInput"));
    QCOMPARE(editor->placeholderText(), reason);
    QSignalSpy sent(&input, &ui::InputBox::sendRequested);
    QSignalSpy started(&run.app->chats(), &gui::ChatController::replyStarted);
    run.type(QStringLiteral("Hello?"));
    QVERIFY(sent.isEmpty());
    QVERIFY(started.isEmpty());
    // The text waits in the box; Send is off and says why.
    QCOMPARE(input.text(), QStringLiteral("Hello?"));
    auto* send = input.findChild<QPushButton*>(QStringLiteral("sendButton"));
    QVERIFY(!send->isEnabled());
    QCOMPARE(send->toolTip(), reason);
    QVERIFY(!run.app->chats().currentChat());

    // With a model, the same text goes.
    run.app->window().demoAction()->trigger();
    QVERIFY(run.waitForModel());
    QCOMPARE(input.unavailableReason(), QString());
    QVERIFY(send->isEnabled());
    QCOMPARE(send->toolTip(), QStringLiteral("Send the message (Enter)"));
    QVERIFY(editor->placeholderText() != reason);
    input.send();
    QCOMPARE(sent.size(), 1);
  }

  void importOpensInTheDocumentsFolder() {
    AppRun run{QString()};
    QString started;
    run.choose_file = [&started](const QString&, const QString& start, const QString&, bool) {
      started = start;
      return QString();
    };
    run.start();
    run.app->window().importAction()->trigger();
    const QString documents = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
    QCOMPARE(started, QDir(documents).absolutePath() + u'/');
  }
};

QUIRE_TEST(FirstHourDetailsTest)
#include "test_first_hour_details.moc"
