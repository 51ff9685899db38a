#include <QTest>
#include <vector>

#include "quire/cache/eviction_policy.h"
#include "test_main.h"

using namespace quire::cache;

class EvictionPolicyTest : public QObject {
  Q_OBJECT

  // Chain A: 10 <- 11 <- 12 (accessed 5, 6, 7); chain B: 20 <- 21 (accessed 1, 9);
  // a lone page 30 (accessed 3).
  static std::vector<EvictionCandidate> forest() {
    return {
        {10, 5, kNoPage, 1}, {11, 6, 10, 1}, {12, 7, 11, 0},
        {20, 1, kNoPage, 1}, {21, 9, 20, 0}, {30, 3, kNoPage, 0},
    };
  }

 private slots:
  void leafFirstKeepsChainStartsLongest() {
    const LeafFirstLru policy;
    // Leaves by age: 30 (3), 12 (7), then 11 becomes a leaf (6), 10 (5), 21 (9), 20 (1).
    const std::vector<PageIndex> expected{30, 12, 11, 10, 21, 20};
    QCOMPARE(policy.select(forest(), 6), expected);
    QCOMPARE(policy.select(forest(), 2), (std::vector<PageIndex>{30, 12}));
  }

  void plainLruIgnoresChains() {
    const LeastRecentlyUsed policy;
    QCOMPARE(policy.select(forest(), 6), (std::vector<PageIndex>{20, 30, 10, 11, 12, 21}));
  }

  void pageContinuedByAReferencedPageIsTakenLast() {
    // Page 40 has a child (count 1) that is not a candidate: it is still in use.
    const std::vector<EvictionCandidate> candidates{{40, 1, kNoPage, 1}, {41, 8, kNoPage, 0}};
    const LeafFirstLru policy;
    QCOMPARE(policy.select(candidates, 1), (std::vector<PageIndex>{41}));
    // Asked for more than the leaves give, it falls back to age.
    QCOMPARE(policy.select(candidates, 2), (std::vector<PageIndex>{41, 40}));
  }

  void tiesBreakByPageIndex() {
    const std::vector<EvictionCandidate> candidates{{7, 4, kNoPage, 0}, {3, 4, kNoPage, 0}};
    QCOMPARE(LeafFirstLru().select(candidates, 2), (std::vector<PageIndex>{3, 7}));
    QCOMPARE(LeastRecentlyUsed().select(candidates, 2), (std::vector<PageIndex>{3, 7}));
  }

  void neverReturnsMoreThanItHas() {
    QCOMPARE(LeafFirstLru().select(forest(), 50).size(), std::size_t(6));
    QCOMPARE(LeafFirstLru().select({}, 3).size(), std::size_t(0));
  }
};

QUIRE_TEST(EvictionPolicyTest)
#include "test_eviction_policy.moc"
