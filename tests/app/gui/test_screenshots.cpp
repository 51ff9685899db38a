// The window as people see it, with the demo model in a conversation and
// the memory panel open. Set QUIRE_SCREENSHOT_DIR to keep the pictures (the
// README's come from here: docs/screenshots/).

#include <QDir>
#include <QDockWidget>
#include <QTest>

#include "app_test_support.h"
#include "main_window.h"
#include "quire/ui/chat_view.h"
#include "quire/ui/memory_panel.h"
#include "test_main.h"

using namespace quire;
using namespace quire::test;

class ScreenshotTest : public QObject {
  Q_OBJECT

 private slots:
  void theWindowInAConversation() {
    AppRun run(demo_model(), 60);
    run.start();
    gui::MainWindow& window = run.app->window();
    window.resize(1440, 900);
    window.memoryDock()->show();
    run.app->show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QVERIFY(run.waitForModel());
    for (const char* message : {"Hello!", "Tell me a fortune.", "What does quire mean?"}) {
      QVERIFY(run.send(QString::fromLatin1(message)));
    }
    QCOMPARE(window.chatView()->messageCount(), 6);
    // Let the memory panel catch the last snapshot and the chart a few samples.
    QTest::qWait(800);
    const QImage shot = window.grab().toImage();
    QCOMPARE(shot.size(), QSize(1440, 900) * window.devicePixelRatio());
    const QString dir = qEnvironmentVariable("QUIRE_SCREENSHOT_DIR");
    if (!dir.isEmpty()) {
      QDir().mkpath(dir);
      QVERIFY(shot.save(QDir(dir).filePath(QStringLiteral("quire-demo.png"))));
    }
    window.close();
  }
};

QUIRE_TEST(ScreenshotTest)
#include "test_screenshots.moc"
