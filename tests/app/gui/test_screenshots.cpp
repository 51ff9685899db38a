// The window as people see it: the demo model in a two-turn conversation, the
// settings with their plan, and the memory panel. Set QUIRE_SCREENSHOT_DIR to
// keep the pictures; scripts/screenshots.sh runs this under Xvfb for the
// README's docs/screenshots/.

#include <QDialog>
#include <QDir>
#include <QDockWidget>
#include <QTest>

#include "app_test_support.h"
#include "main_window.h"
#include "quire/ui/chat_view.h"
#include "quire/ui/memory_panel.h"
#include "quire/ui/plan_widget.h"
#include "quire/ui/settings_panel.h"
#include "test_main.h"

using namespace quire;
using namespace quire::test;

namespace {

void keep(const QImage& shot, const char* name) {
  const QString dir = qEnvironmentVariable("QUIRE_SCREENSHOT_DIR");
  if (dir.isEmpty()) return;
  QDir().mkpath(dir);
  QVERIFY(shot.save(QDir(dir).filePath(QString::fromLatin1(name))));
}

}  // namespace

class ScreenshotTest : public QObject {
  Q_OBJECT

 private slots:
  void theWindowTheSettingsAndTheMemoryPanel() {
    AppRun run(demo_model(), 60);
    run.start();
    gui::MainWindow& window = run.app->window();
    window.resize(1440, 900);
    window.memoryDock()->show();
    run.app->show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QVERIFY(run.waitForModel());
    for (const char* message : {"Hello!", "Tell me a fortune."}) {
      QVERIFY(run.send(QString::fromLatin1(message)));
    }
    QCOMPARE(window.chatView()->messageCount(), 4);
    // Let the memory panel catch the last snapshot and the chart a few samples.
    QTest::qWait(1500);
    const QImage main = window.grab().toImage();
    QCOMPARE(main.size(), QSize(1440, 900) * window.devicePixelRatio());
    keep(main, "quire-main.png");

    const QImage memory = window.memoryPanel()->grab().toImage();
    QVERIFY(!memory.isNull());
    QVERIFY(!window.memoryPanel()->isShowingEmptyState());
    keep(memory, "quire-memory.png");

    window.settingsAction()->trigger();
    QDialog& settings = *window.settingsDialog();
    QVERIFY(QTest::qWaitForWindowExposed(&settings));
    auto* plan = window.settingsPanel()->findChild<ui::PlanWidget*>(QStringLiteral("plan"));
    QVERIFY(plan && plan->plan().valid && plan->plan().fits);
    QTest::qWait(200);
    keep(settings.grab().toImage(), "quire-settings.png");
    settings.close();
    window.close();
  }
};

QUIRE_TEST(ScreenshotTest)
#include "test_screenshots.moc"
