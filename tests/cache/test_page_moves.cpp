#include <QTest>
#include <vector>

#include "quire/cache/page_moves.h"
#include "test_main.h"

using namespace quire::cache;

class PageMovesTest : public QObject {
  Q_OBJECT

 private slots:
  void chainsAndCyclesMoveEveryPageOnce() {
    std::vector<int> content{10, 11, 12, 13, 14, 15};
    int buffer = -1;
    PageMoveOps ops;
    ops.copy = [&](PageIndex from, PageIndex to) {
      content[static_cast<std::size_t>(to)] = content[static_cast<std::size_t>(from)];
    };
    ops.to_buffer = [&](PageIndex from) { buffer = content[static_cast<std::size_t>(from)]; };
    ops.from_buffer = [&](PageIndex to) { content[static_cast<std::size_t>(to)] = buffer; };

    // Open: 0 -> 1 -> 2 (page 2's content is not needed). Cycle: 3 -> 4 -> 5 -> 3.
    const std::vector<PageMoveChain> chains{{{0, 1, 2}, false}, {{3, 4, 5}, true}};
    execute_page_moves(chains, ops);
    QCOMPARE(content[1], 10);
    QCOMPARE(content[2], 11);
    QCOMPARE(content[4], 13);
    QCOMPARE(content[5], 14);
    QCOMPARE(content[3], 15);
    QCOMPARE(count_page_copies(chains), 2 + 4);
  }

  void rejectsAChainOfOnePage() {
    const std::vector<PageMoveChain> chains{{{4}, false}};
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, execute_page_moves(chains, PageMoveOps{}));
  }
};

QUIRE_TEST(PageMovesTest)
#include "test_page_moves.moc"
