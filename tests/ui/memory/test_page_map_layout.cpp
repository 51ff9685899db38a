#include <QTest>

#include "quire/ui/page_map_layout.h"
#include "test_main.h"

using quire::ui::PageMapLayout;

namespace {

// Every pixel of `area` classified by brute force from the cell rectangles,
// for comparison with cellAt.
std::optional<int> bruteForceCellAt(const PageMapLayout& layout, QPoint point) {
  for (int cell = 0; cell < layout.cells; ++cell) {
    if (layout.cellRect(cell).contains(point)) return cell;
  }
  return std::nullopt;
}

}  // namespace

class PageMapLayoutTest : public QObject {
  Q_OBJECT

 private slots:
  void fitsLargestCell_data() {
    QTest::addColumn<int>("pages");
    QTest::addColumn<QSize>("area");
    QTest::addColumn<int>("cell");
    QTest::addColumn<int>("gap");
    QTest::addColumn<int>("columns");
    QTest::addColumn<int>("rows");
    QTest::addColumn<int>("perCell");

    // 16 pages: the largest cell, one row.
    QTest::newRow("16 pages, wide") << 16 << QSize(394, 194) << 16 << 2 << 22 << 1 << 1;
    // Narrower: the same cells reflow onto more rows.
    QTest::newRow("16 pages, narrow") << 16 << QSize(100, 194) << 16 << 2 << 5 << 4 << 1;
    // 600 pages: 16..10 px are too tall (10 px: 33 columns x 19 rows = 226 px).
    QTest::newRow("600 pages") << 600 << QSize(394, 194) << 9 << 2 << 36 << 17 << 1;
    QTest::newRow("600 pages, wide") << 600 << QSize(994, 294) << 16 << 2 << 55 << 11 << 1;
    // Small cells lose their gaps: 3 px cells have 1 px, 2 px cells none.
    QTest::newRow("4000 pages") << 4000 << QSize(394, 194) << 3 << 1 << 98 << 41 << 1;
    QTest::newRow("5000 pages") << 5000 << QSize(394, 194) << 2 << 0 << 197 << 26 << 1;
    QTest::newRow("20000 pages") << 20000 << QSize(394, 194) << 1 << 0 << 394 << 51 << 1;
    QTest::newRow("100000 pages") << 100000 << QSize(794, 394) << 1 << 0 << 794 << 126 << 1;
    // More pages than pixels: each pixel a run of pages.
    QTest::newRow("100000 pages, aggregated")
        << 100000 << QSize(394, 194) << 1 << 0 << 394 << 127 << 2;
    QTest::newRow("1000000 pages, aggregated")
        << 1000000 << QSize(394, 194) << 1 << 0 << 394 << 182 << 14;
  }

  void fitsLargestCell() {
    QFETCH(int, pages);
    QFETCH(QSize, area);
    const PageMapLayout layout = PageMapLayout::fit(pages, QRect(QPoint(3, 3), area));
    QTEST(layout.cell, "cell");
    QTEST(layout.gap, "gap");
    QTEST(layout.columns, "columns");
    QTEST(layout.rows, "rows");
    QTEST(layout.pages_per_cell, "perCell");
    QCOMPARE(layout.origin, QPoint(3, 3));
    // Everything fits inside the area.
    QVERIFY(QRect(QPoint(3, 3), area).contains(layout.boundingRect()));
    QVERIFY(layout.cells * layout.pages_per_cell >= pages);
    QVERIFY((layout.cells - 1) * layout.pages_per_cell < pages);
  }

  void hitsExactCells() {
    // 16 px cells with 2 px gaps from (3, 3): cell i spans x 3+18i .. 18+18i.
    const PageMapLayout layout = PageMapLayout::fit(16, QRect(3, 3, 394, 194));
    QCOMPARE(layout.cellAt({3, 3}), std::optional<int>(0));
    QCOMPARE(layout.cellAt({18, 18}), std::optional<int>(0));
    QCOMPARE(layout.cellAt({21, 10}), std::optional<int>(1));
    QCOMPARE(layout.cellAt({273, 3}), std::optional<int>(15));
    QCOMPARE(layout.cellAt({288, 18}), std::optional<int>(15));
    QCOMPARE(layout.cellRect(15), QRect(273, 3, 16, 16));
  }

  void missesGapsAndOutside() {
    const PageMapLayout layout = PageMapLayout::fit(16, QRect(3, 3, 394, 194));
    QCOMPARE(layout.cellAt({19, 10}), std::nullopt);   // gap between 0 and 1
    QCOMPARE(layout.cellAt({20, 10}), std::nullopt);   // still the gap
    QCOMPARE(layout.cellAt({10, 19}), std::nullopt);   // below the row
    QCOMPARE(layout.cellAt({2, 10}), std::nullopt);    // left of the origin
    QCOMPARE(layout.cellAt({10, 2}), std::nullopt);    // above it
    QCOMPARE(layout.cellAt({291, 10}), std::nullopt);  // where a 17th cell would be
    QCOMPARE(layout.cellAt({-50, -50}), std::nullopt);
  }

  void missesPastTheLastCellOfTheLastRow() {
    // 600 pages at 9 px + 2: the last row holds 24 of 36 cells.
    const PageMapLayout layout = PageMapLayout::fit(600, QRect(3, 3, 394, 194));
    QCOMPARE(layout.cellRect(599), QRect(3 + 23 * 11, 3 + 16 * 11, 9, 9));
    QCOMPARE(layout.cellAt({260, 183}), std::optional<int>(599));
    QCOMPARE(layout.cellAt({3 + 24 * 11 + 1, 183}), std::nullopt);
    QCOMPARE(layout.cellAt({3 + 35 * 11, 3 + 15 * 11}), std::optional<int>(575));
    QCOMPARE(layout.cellAt({3 + 36 * 11, 3}), std::nullopt);  // right of the last column
  }

  void cellAtAgreesWithCellRects_data() {
    QTest::addColumn<int>("pages");
    QTest::addColumn<QSize>("area");
    QTest::newRow("16") << 16 << QSize(120, 60);
    QTest::newRow("77") << 77 << QSize(110, 60);
    QTest::newRow("600") << 600 << QSize(200, 100);
    QTest::newRow("1500") << 1500 << QSize(120, 80);
    QTest::newRow("aggregated") << 40000 << QSize(60, 40);
  }

  void cellAtAgreesWithCellRects() {
    QFETCH(int, pages);
    QFETCH(QSize, area);
    const PageMapLayout layout = PageMapLayout::fit(pages, QRect(QPoint(5, 7), area));
    QVERIFY(!layout.isEmpty());
    for (int y = 0; y < area.height() + 14; ++y) {
      for (int x = 0; x < area.width() + 10; ++x) {
        const QPoint point(x, y);
        if (layout.cellAt(point) != bruteForceCellAt(layout, point)) {
          QFAIL(qPrintable(QStringLiteral("disagree at %1,%2").arg(x).arg(y)));
        }
      }
    }
  }

  void emptyWhenNothingFits() {
    QVERIFY(PageMapLayout::fit(0, QRect(0, 0, 100, 100)).isEmpty());
    QVERIFY(PageMapLayout::fit(10, QRect(0, 0, 0, 100)).isEmpty());
    QVERIFY(PageMapLayout::fit(10, QRect(0, 0, 100, 0)).isEmpty());
    QCOMPARE(PageMapLayout::fit(10, QRect(0, 0, 0, 0)).cellAt({0, 0}), std::nullopt);
  }

  void spanCoversExactlyTheCellsMeetingARect() {
    const PageMapLayout layout = PageMapLayout::fit(600, QRect(3, 3, 394, 194));
    // A rectangle over the gap after column 1 and into column 2, rows 3..4.
    const auto span = layout.cellsMeeting(QRect(3 + 11 + 9, 3 + 3 * 11, 4, 15));
    QCOMPARE(span.first_column, 1);
    QCOMPARE(span.last_column, 2);
    QCOMPARE(span.first_row, 3);
    QCOMPARE(span.last_row, 4);
    const auto all = layout.cellsMeeting(QRect(-100, -100, 2000, 2000));
    QCOMPARE(all.first_column, 0);
    QCOMPARE(all.last_column, 35);
    QCOMPARE(all.last_row, 16);
  }

  void runsOfPagesMapToTheirCell() {
    const PageMapLayout layout = PageMapLayout::fit(100000, QRect(0, 0, 394, 194));
    QCOMPARE(layout.pages_per_cell, 2);
    QCOMPARE(layout.cellOfPage(0), 0);
    QCOMPARE(layout.cellOfPage(1), 0);
    QCOMPARE(layout.cellOfPage(99999), 49999);
    QCOMPARE(layout.firstPage(49999), 99998);
    QCOMPARE(layout.pageCount(49999), 2);
    const PageMapLayout odd = PageMapLayout::fit(1000001, QRect(0, 0, 394, 194));
    QCOMPARE(odd.pageCount(odd.cells - 1), 1000001 - (odd.cells - 1) * odd.pages_per_cell);
  }
};

QUIRE_TEST(PageMapLayoutTest)
#include "test_page_map_layout.moc"
