// The first window a user sees: it is sized to the screen's available area,
// the memory panel included, and leaves the chat column the larger share.

#include <QDialog>
#include <QDockWidget>
#include <QScreen>
#include <QTest>

#include "app_test_support.h"
#include "main_window.h"
#include "test_main.h"

using namespace quire;
using namespace quire::test;

class FirstWindowTest : public QObject {
  Q_OBJECT

 private slots:
  void theFirstWindowFitsTheScreenWithItsMemoryPanel() {
    AppRun run{QString()};
    run.start();
    gui::MainWindow& window = run.app->window();
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    const QRect available = window.screen()->availableGeometry();
    const QSize allowance(gui::MainWindow::kFrameAllowance, gui::MainWindow::kFrameAllowance);
    // The offscreen screen is smaller than the preferred size, as the
    // 1280×800 screen of the report is.
    QVERIFY2(available.width() < gui::MainWindow::kPreferredSize.width() ||
                 available.height() < gui::MainWindow::kPreferredSize.height(),
             "the screen has room for any size: this test checks nothing");
    const QSize minimum = window.minimumSizeHint();
    const QSize expected =
        gui::MainWindow::kPreferredSize.boundedTo(available.size() - allowance).expandedTo(minimum);
    QCOMPARE(window.size(), expected);
    // On the report's screen the whole window fits, frame included.
    QVERIFY2(
        (minimum + allowance).width() <= 1280 && (minimum + allowance).height() <= 800,
        qPrintable(QStringLiteral("minimum %1x%2").arg(minimum.width()).arg(minimum.height())));

    // The memory panel is inside the window, and the chat column has the
    // larger share.
    QDockWidget* dock = window.memoryDock();
    QVERIFY(dock->isVisible());
    QVERIFY(window.rect().contains(QRect(dock->pos(), dock->size())));
    QVERIFY2(
        dock->width() * 3 <= window.width(),
        qPrintable(
            QStringLiteral("memory panel %1 of %2 px").arg(dock->width()).arg(window.width())));

    // Settings open no larger than the screen's room either.
    QDialog* settings = window.settingsDialog();
    QVERIFY(settings->width() <=
            std::max(available.width() - allowance.width(), settings->minimumSizeHint().width()));
    QVERIFY(settings->height() <= std::max(available.height() - allowance.height(),
                                           settings->minimumSizeHint().height()));
  }
};

QUIRE_TEST(FirstWindowTest)
#include "test_first_window.moc"
