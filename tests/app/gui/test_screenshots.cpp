// The window as people see it: the demo model in a two-turn conversation, the
// settings with their plan (and where the cache lives), the memory panel, a
// regenerated reply with its "‹ 2/2 ›" switcher, and the memory panel of a
// Gemma 3 download with its window pool. Set QUIRE_SCREENSHOT_DIR to
// keep the pictures; scripts/screenshots.sh runs this under Xvfb for the
// README's docs/screenshots/.

#include <QComboBox>
#include <QDialog>
#include <QDir>
#include <QDockWidget>
#include <QLabel>
#include <QScrollArea>
#include <QSignalSpy>
#include <QTest>

#include "app_test_support.h"
#include "chat_controller.h"
#include "main_window.h"
#include "quire/ui/chat_view.h"
#include "quire/ui/memory_panel.h"
#include "quire/ui/plan_widget.h"
#include "quire/ui/settings_panel.h"
#include "test_main.h"

using namespace quire;
using namespace quire::test;

namespace {

// Starts the application in a desktop-sized window with the memory dock
// open, and holds a two-turn chat; false when the model or a reply fails.
bool start_and_chat(AppRun& run) {
  run.start();
  gui::MainWindow& window = run.app->window();
  window.resize(1440, 900);
  window.memoryDock()->show();
  run.app->show();
  if (!QTest::qWaitForWindowExposed(&window) || !run.waitForModel()) return false;
  for (const char* message : {"Hello!", "Tell me a fortune."}) {
    if (!run.send(QString::fromLatin1(message))) return false;
  }
  return true;
}

}  // namespace

class ScreenshotTest : public QObject {
  Q_OBJECT

 private slots:
  void theWindowTheSettingsAndTheMemoryPanel() {
    // A device with memory of its own, as a GPU has: on the machine's own
    // memory a cache "in host memory" is where it already is, and the plan
    // would have no host-memory line to show.
    AppRun run(demo_model(), 60, QStringLiteral("cpu:8GiB"));
    QVERIFY(start_and_chat(run));
    gui::MainWindow& window = run.app->window();
    QCOMPARE(window.chatView()->messageCount(), 4);
    // Let the memory panel catch the last snapshot and the chart a few samples.
    QTest::qWait(1500);
    const QImage main = window.grab().toImage();
    QCOMPARE(main.size(), QSize(1440, 900) * window.devicePixelRatio());
    keep_screenshot(main, "quire-main.png");

    const QImage memory = window.memoryPanel()->grab().toImage();
    QVERIFY(!memory.isNull());
    QVERIFY(!window.memoryPanel()->isShowingEmptyState());
    keep_screenshot(memory, "quire-memory.png");

    window.settingsAction()->trigger();
    QDialog& settings = *window.settingsDialog();
    QVERIFY(QTest::qWaitForWindowExposed(&settings));
    auto* plan = window.settingsPanel()->findChild<ui::PlanWidget*>(QStringLiteral("plan"));
    QVERIFY(plan && plan->plan().valid && plan->plan().fits);
    QTest::qWait(200);
    keep_screenshot(settings.grab().toImage(), "quire-settings.png");
    // Where the cache lives: the fields scrolled into view and "offloaded"
    // chosen, so the plan beside them counts the pages in host memory. Not
    // applied: the choice goes back before the dialog closes.
    auto* fields =
        window.settingsPanel()->findChild<QScrollArea*>(QStringLiteral("settingsFields"));
    auto* residence =
        window.settingsPanel()->findChild<QComboBox*>(QStringLiteral("cacheResidence"));
    QVERIFY(fields && residence);
    fields->ensureWidgetVisible(
        window.settingsPanel()->findChild<QComboBox*>(QStringLiteral("cacheDevice")));
    residence->setCurrentIndex(residence->findData(QStringLiteral("offloaded")));
    QTRY_VERIFY(plan->plan().host_cache > 0);
    QTest::qWait(200);
    keep_screenshot(settings.grab().toImage(), "quire-settings-cache.png");
    residence->setCurrentIndex(residence->findData(QStringLiteral("device")));
    QTRY_COMPARE(plan->plan().host_cache, qint64(0));
    settings.close();

    // The last reply generated again: both versions stay, one switch apart.
    const store::ChatId chat = *run.app->chats().currentChat();
    const store::MessageId last = run.app->store().messages(chat).last().id;
    QSignalSpy finished(&run.app->chats(), &gui::ChatController::replyFinished);
    run.app->chats().regenerate(store::raw(last));
    QVERIFY(finished.wait(120'000));
    const store::MessageId again = run.app->store().messages(chat).last().id;
    QLabel* switcher = nullptr;
    for (QLabel* label :
         window.chatView()->findChildren<QLabel*>(QStringLiteral("branchPosition"))) {
      if (label->isVisible() && label->parentWidget()->parentWidget()->property("messageId") ==
                                    QVariant(store::raw(again))) {
        switcher = label;
      }
    }
    QVERIFY(switcher);
    QCOMPARE(switcher->text(), QStringLiteral("2/2"));
    // The conversation alone, as wide as the window lets it be.
    window.memoryDock()->hide();
    QTest::qWait(200);
    keep_screenshot(window.chatView()->grab().toImage(), "quire-branches.png");
    window.close();
  }

  // Gemma 3 as downloaded (its published config, shapes scaled down, its real
  // tokenizer and template): the memory panel maps the global layers' pages
  // and the sliding layers' window pool apart, each with its size.
  void theTwoPoolsOfAMixedModel() {
    AppRun run(published_family_model(QStringLiteral("gemma-3-4b-it"), "gemma-3-4b-it.json",
                                      "tokenizer-gemma3"),
               40);
    // A cache of 128 pages, of which the sliding layers need only the few of
    // each chat's window.
    app::AppSettings settings(run.data.filePath(QStringLiteral("quire.conf")));
    settings.load();
    settings.engine.cache_tokens = 32768;
    QVERIFY(settings.save());
    QVERIFY(start_and_chat(run));
    gui::MainWindow& window = run.app->window();
    QTRY_VERIFY(window.memoryPanel()->isShowingWindowPool());
    QTest::qWait(1500);
    keep_screenshot(window.memoryPanel()->grab().toImage(), "quire-memory-window-pool.png");
    window.close();
  }
};

QUIRE_TEST(ScreenshotTest)
#include "test_screenshots.moc"
