#include <QApplication>
#include <QElapsedTimer>
#include <QHelpEvent>
#include <QMouseEvent>
#include <QSignalSpy>
#include <QTest>
#include <QToolTip>

#include "memory_fixtures.h"
#include "quire/ui/memory_style.h"
#include "quire/ui/memory_text.h"
#include "quire/ui/page_map_widget.h"
#include "test_main.h"

using namespace quire::ui;
using namespace quire::ui::test;

namespace {

// Widgets are laid out inside a 3 px margin that leaves room for focus frames.
constexpr int kMargin = 3;

QColor pixel(const QImage& image, QPoint point) {
  return QColor::fromRgba(image.pixel(point));
}

void sendMouseMove(QWidget& widget, QPoint point) {
  QMouseEvent move(QEvent::MouseMove, point, widget.mapToGlobal(point), Qt::NoButton, Qt::NoButton,
                   Qt::NoModifier);
  QApplication::sendEvent(&widget, &move);
}

}  // namespace

class PageMapWidgetTest : public QObject {
  Q_OBJECT

 private slots:
  void hitTestsThroughTheWidget_data() {
    QTest::addColumn<int>("pages");
    QTest::addColumn<QSize>("size");
    QTest::addColumn<QPoint>("point");
    QTest::addColumn<int>("page");  // -1: none

    // 16 pages in 400 x 200: 16 px cells, 2 px gaps, one row from (3, 3).
    QTest::newRow("16: first cell") << 16 << QSize(400, 200) << QPoint(3, 3) << 0;
    QTest::newRow("16: its last pixel") << 16 << QSize(400, 200) << QPoint(18, 18) << 0;
    QTest::newRow("16: gap") << 16 << QSize(400, 200) << QPoint(19, 10) << -1;
    QTest::newRow("16: second") << 16 << QSize(400, 200) << QPoint(21, 10) << 1;
    QTest::newRow("16: margin") << 16 << QSize(400, 200) << QPoint(1, 1) << -1;
    QTest::newRow("16: after last") << 16 << QSize(400, 200) << QPoint(300, 10) << -1;
    QTest::newRow("16: below") << 16 << QSize(400, 200) << QPoint(10, 40) << -1;
    // 100 px wide: 5 columns, so page 5 starts the second row.
    QTest::newRow("16 narrow: page 5") << 16 << QSize(106, 200) << QPoint(3, 21) << 5;
    QTest::newRow("16 narrow: page 15") << 16 << QSize(106, 200) << QPoint(3, 57) << 15;
    QTest::newRow("16 narrow: row gap") << 16 << QSize(106, 200) << QPoint(3, 20) << -1;
    // 600 pages in 400 x 200: 9 px cells, 2 px gaps, 36 columns.
    QTest::newRow("600: page 37") << 600 << QSize(400, 200) << QPoint(3 + 11, 3 + 11) << 37;
    QTest::newRow("600: page 599") << 600 << QSize(400, 200) << QPoint(264, 187) << 599;
    QTest::newRow("600: after 599") << 600 << QSize(400, 200) << QPoint(268, 183) << -1;
    QTest::newRow("600: gap") << 600 << QSize(400, 200) << QPoint(3 + 9, 5) << -1;
    // 100,000 pages in 800 x 400: one pixel each, 794 per row.
    QTest::newRow("100k: page 794") << 100000 << QSize(800, 400) << QPoint(3, 4) << 794;
    QTest::newRow("100k: last") << 100000 << QSize(800, 400)
                                << QPoint(3 + 99999 % 794, 3 + 99999 / 794) << 99999;
    // In 400 x 200 each pixel is a run of two pages; the first is reported.
    QTest::newRow("100k aggregated") << 100000 << QSize(400, 200) << QPoint(4, 3) << 2;
  }

  void hitTestsThroughTheWidget() {
    QFETCH(int, pages);
    QFETCH(QSize, size);
    QFETCH(QPoint, point);
    QFETCH(int, page);
    PageMapWidget widget;
    widget.resize(size);
    widget.setPages(cyclingPages(pages));
    const std::optional<int> expected = page < 0 ? std::nullopt : std::optional<int>(page);
    QCOMPARE(widget.cellAt(point), expected);
    if (expected) QVERIFY(widget.pageRect(*expected).contains(point));
  }

  void reflowsWithTheWidth() {
    PageMapWidget widget;
    widget.setPages(cyclingPages(16));
    widget.resize(400, 200);
    QCOMPARE(widget.cellLayout().columns, 22);
    QCOMPARE(widget.pageRect(5), QRect(kMargin + 5 * 18, kMargin, 16, 16));
    widget.resize(106, 200);
    QCOMPARE(widget.cellLayout().columns, 5);
    QCOMPARE(widget.pageRect(5), QRect(kMargin, kMargin + 18, 16, 16));
    // Shorter than the rows need: the cells shrink instead.
    widget.resize(106, 40);
    QVERIFY(widget.cellLayout().cell < 16);
    QVERIFY(widget.cellLayout().boundingRect().bottom() < 40 - kMargin);
  }

  void paintsEachStateInItsColour() {
    PageMapWidget widget;
    widget.resize(400, 200);
    widget.setPages(cyclingPages(4));
    const QImage image = render(widget);
    for (int page = 0; page < 4; ++page) {
      const auto state = static_cast<PageCellState>(page);
      const QRect cell = widget.pageRect(page);
      QCOMPARE(pixel(image, cell.topLeft() + QPoint(1, 1)), widget.stateColor(state));
      QCOMPARE(pixel(image, cell.bottomRight() - QPoint(1, 1)), widget.stateColor(state));
    }
    // The colours are the chosen ones, and free follows the palette.
    QCOMPARE(widget.stateColor(PageCellState::Active), QColor(0x00, 0x72, 0xb2));
    QCOMPARE(widget.stateColor(PageCellState::Cached), QColor(0x56, 0xb4, 0xe9));
    QCOMPARE(widget.stateColor(PageCellState::Shared), QColor(0xe6, 0x9f, 0x00));
    QCOMPARE(widget.stateColor(PageCellState::Free), trackColor(widget.palette()));
    // Shared cells carry a darker dot in the middle.
    const QRect shared = widget.pageRect(3);
    QCOMPARE(pixel(image, shared.center()).rgb(),
             widget.stateColor(PageCellState::Shared).darker(260).rgb());
  }

  // Pages read back from the disk tier take their own colour whatever their
  // state, except free pages (their content is gone); the tooltip says so.
  void paintsPagesRestoredFromDiskInTheirOwnColour() {
    PageMapWidget widget;
    widget.resize(400, 200);
    QList<PageCellView> pages = cyclingPages(4);
    for (PageCellView& page : pages)
      page.from_disk = true;
    widget.setPages(pages);
    const QImage image = render(widget);
    QCOMPARE(fromDiskColor(), QColor(0xf0, 0xe4, 0x42));
    for (int page = 0; page < 4; ++page) {
      const auto state = static_cast<PageCellState>(page);
      const QColor expected =
          state == PageCellState::Free ? widget.stateColor(state) : fromDiskColor();
      QCOMPARE(pixel(image, widget.pageRect(page).topLeft() + QPoint(1, 1)), expected);
    }
    QVERIFY(pageToolTip(pages[2]).endsWith(QStringLiteral("\nRestored from disk")));
    QVERIFY(!pageToolTip(cyclingPages(4)[2]).contains(QStringLiteral("disk")));

    // Computed again (no longer from disk): back to the state's colour.
    pages[2].from_disk = false;
    widget.setPages(pages);
    const QImage again = render(widget);
    QCOMPARE(pixel(again, widget.pageRect(2).topLeft() + QPoint(1, 1)),
             widget.stateColor(PageCellState::Cached));

    // Many pages to a pixel: a run mostly restored from disk shows as such.
    QList<PageCellView> many = cyclingPages(100000);
    for (PageCellView& page : many)
      page.from_disk = page.state != PageCellState::Free;
    widget.setPages(many);
    QVERIFY(widget.cellLayout().pages_per_cell > 1);
    const QImage dense = render(widget);
    QCOMPARE(pixel(dense, widget.pageRect(0).topLeft()), fromDiskColor());
  }

  void followsThePalette() {
    PageMapWidget widget;
    widget.resize(200, 100);
    widget.setPages(uniformPages(4, PageCellState::Free));
    QPalette dark = widget.palette();
    dark.setColor(QPalette::Window, QColor(30, 30, 30));
    dark.setColor(QPalette::WindowText, QColor(230, 230, 230));
    widget.setPalette(dark);
    QCOMPARE(widget.stateColor(PageCellState::Free), trackColor(dark));
    const QImage image = render(widget);
    QCOMPARE(pixel(image, widget.pageRect(0).center()), trackColor(dark));
  }

  void toolTipDescribesTheCell() {
    PageMapWidget widget;
    widget.resize(400, 200);
    QList<PageCellView> pages = cyclingPages(8);
    pages[6] = {6, PageCellState::Cached, 0, 256, 256, QStringLiteral("9b1c44d0"), {}};
    pages[7] = {7,
                PageCellState::Shared,
                2,
                256,
                256,
                QStringLiteral("51e0aa7f"),
                {QStringLiteral("Lisbon"), QStringLiteral("Parser")}};
    widget.setPages(pages);
    QCOMPARE(widget.toolTipForPage(7), QStringLiteral("Page 7 · shared\n256 / 256 tokens\n"
                                                      "2 references\nHash 51e0aa7f…\n"
                                                      "Held by Lisbon, Parser"));
    QCOMPARE(widget.toolTipForPage(6), QStringLiteral("Page 6 · cached\n256 / 256 tokens\n"
                                                      "No references: kept for reuse\n"
                                                      "Hash 9b1c44d0…"));
    QCOMPARE(widget.toolTipForPage(8), QString());

    // Through the event a user's hover produces.
    widget.show();
    QVERIFY(QTest::qWaitForWindowExposed(&widget));
    const QPoint centre = widget.pageRect(7).center();
    QHelpEvent help(QEvent::ToolTip, centre, widget.mapToGlobal(centre));
    QApplication::sendEvent(&widget, &help);
    QCOMPARE(QToolTip::text(), widget.toolTipForPage(7));
    QToolTip::hideText();
  }

  void toolTipOfARunOfPages() {
    PageMapWidget widget;
    widget.resize(400, 200);  // 100,000 pages: two per pixel
    widget.setPages(cyclingPages(100000));
    QCOMPARE(widget.toolTipForPage(5), QStringLiteral("Pages 4–5\n1 in use, 1 free"));
  }

  void keyboardMovesTheCursor() {
    PageMapWidget widget;
    widget.resize(400, 200);  // 40 pages: 22 per row
    widget.setPages(cyclingPages(40));
    QSignalSpy moved(&widget, &PageMapWidget::currentPageChanged);
    QCOMPARE(widget.currentPage(), -1);
    const auto press = [&](Qt::Key key) {
      QTest::keyClick(&widget, key);
      return widget.currentPage();
    };
    QCOMPARE(press(Qt::Key_Right), 0);  // the first press lands on page 0
    QCOMPARE(press(Qt::Key_Right), 1);
    QCOMPARE(press(Qt::Key_Down), 23);
    QCOMPARE(press(Qt::Key_Down), 23);  // page 45 does not exist: stay
    QCOMPARE(press(Qt::Key_End), 39);
    QCOMPARE(press(Qt::Key_Up), 17);
    QCOMPARE(press(Qt::Key_Home), 0);
    QCOMPARE(press(Qt::Key_Left), 0);
    QCOMPARE(moved.count(), 6);
    QCOMPARE(moved.at(2).at(0).toInt(), 23);
    QCOMPARE(moved.last().at(0).toInt(), 0);
    // A shorter cache takes the cursor back inside it.
    widget.setPages(cyclingPages(10));
    widget.setCurrentPage(30);
    QCOMPARE(widget.currentPage(), 9);
  }

  void hoverFollowsTheMouse() {
    PageMapWidget widget;
    widget.resize(400, 200);
    widget.setPages(cyclingPages(16));
    QSignalSpy hovered(&widget, &PageMapWidget::hoveredPageChanged);
    sendMouseMove(widget, widget.pageRect(5).center());
    QCOMPARE(widget.hoveredPage(), 5);
    sendMouseMove(widget, widget.pageRect(5).topLeft());                 // same cell: no signal
    sendMouseMove(widget, widget.pageRect(5).topLeft() - QPoint(1, 0));  // gap
    QCOMPARE(widget.hoveredPage(), -1);
    QCOMPARE(hovered.count(), 2);
    QCOMPARE(hovered.at(0).at(0).toInt(), 5);
    QCOMPARE(hovered.at(1).at(0).toInt(), -1);

    // The hovered cell is framed in the text colour, in the gap around it.
    sendMouseMove(widget, widget.pageRect(2).center());
    const QImage image = render(widget);
    const QRect cell = widget.pageRect(2);
    QCOMPARE(pixel(image, cell.topLeft() - QPoint(1, 1)),
             widget.palette().color(QPalette::WindowText));
    QCOMPARE(pixel(image, cell.topLeft() + QPoint(1, 1)), widget.stateColor(PageCellState::Cached));
  }

  void repaintsOnlyWhatChanged() {
    PageMapWidget widget;
    widget.resize(400, 200);
    QList<PageCellView> pages = cyclingPages(600);
    widget.setPages(pages);
    QVERIFY(showAndSettle(widget));
    PaintCounter paints(&widget);

    widget.setPages(pages);  // the same snapshot again
    QList<PageCellView> holders = pages;
    holders[10].holders = QStringList{QStringLiteral("New chat")};
    widget.setPages(holders);  // only the tooltip's contents changed
    QTest::qWait(50);
    QCOMPARE(paints.count(), 0);

    QList<PageCellView> changed = holders;
    changed[37].state = PageCellState::Shared;
    widget.setPages(changed);
    QTRY_VERIFY(paints.count() > 0);
    QCOMPARE(paints.painted(), widget.pageRect(37));
  }

  void drawsAHundredThousandPagesWithinAFrame() {
    PageMapWidget widget;
    widget.resize(800, 400);
    const QList<PageCellView> pages = cyclingPages(100000);
    widget.setPages(pages);
    QCOMPARE(widget.cellLayout().cell, 1);
    // One frame: everything the paint event does for the whole map, drawn into
    // an image as the backing store would be.
    QImage image(widget.size(), QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::transparent);
    QElapsedTimer timer;
    timer.start();
    widget.render(&image);
    const qint64 elapsed = timer.elapsed();
    for (int page : {0, 1, 2, 3, 794, 50001, 99998, 99999}) {
      const auto state = static_cast<PageCellState>(page % 4);
      QCOMPARE(pixel(image, QPoint(kMargin + page % 794, kMargin + page / 794)),
               widget.stateColor(state));
    }
    // A 60 Hz frame is 16 ms; the bound leaves room for sanitizer builds on a
    // busy machine.
    QVERIFY2(elapsed < 100, qPrintable(QStringLiteral("took %1 ms").arg(elapsed)));

    // A later change to one page shows up in place.
    QList<PageCellView> changed = pages;
    changed[50001].state = PageCellState::Shared;
    widget.setPages(changed);
    QCOMPARE(pixel(render(widget), QPoint(kMargin + 50001 % 794, kMargin + 50001 / 794)),
             widget.stateColor(PageCellState::Shared));
  }

  void runsShowTheirBusiestState() {
    PageMapWidget widget;
    widget.resize(400, 200);  // 100,000 pages: a pixel per two pages
    widget.setPages(cyclingPages(100000));
    QCOMPARE(widget.cellLayout().pages_per_cell, 2);
    const QImage image = render(widget);
    // Pairs are (free, in use) and (cached, shared): ties go to the busier state.
    QCOMPARE(pixel(image, QPoint(kMargin, kMargin)), widget.stateColor(PageCellState::Active));
    QCOMPARE(pixel(image, QPoint(kMargin + 1, kMargin)), widget.stateColor(PageCellState::Shared));
    QCOMPARE(pixel(image, QPoint(kMargin + 2, kMargin)), widget.stateColor(PageCellState::Active));
  }

  void emptyMapDrawsNothingAndHitsNothing() {
    PageMapWidget widget;
    widget.resize(300, 100);
    widget.setPages({});
    QVERIFY(widget.cellLayout().isEmpty());
    QCOMPARE(widget.cellAt({10, 10}), std::nullopt);
    QCOMPARE(widget.toolTipForPage(0), QString());
    QTest::keyClick(&widget, Qt::Key_Right);
    QCOMPARE(widget.currentPage(), -1);
  }
};

QUIRE_TEST(PageMapWidgetTest)
#include "test_page_map_widget.moc"
