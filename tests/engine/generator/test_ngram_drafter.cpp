// Prompt lookup's proposals: the longest recurring suffix wins, then the
// most recent place it recurs, and the draft is what followed it there.

#include <QTest>
#include <stdexcept>
#include <vector>

#include "quire/engine/generator/ngram_drafter.h"
#include "test_main.h"

using quire::engine::NgramDrafter;
using quire::engine::NgramSettings;
using Tokens = std::vector<quire::cache::TokenId>;

Q_DECLARE_METATYPE(Tokens)

class NgramDrafterTest : public QObject {
  Q_OBJECT

 private slots:
  void proposals_data() {
    QTest::addColumn<Tokens>("history");
    QTest::addColumn<int>("shortest");
    QTest::addColumn<int>("max_tokens");
    QTest::addColumn<Tokens>("expected");
    QTest::newRow("a suffix of three recurs")
        << Tokens{1, 2, 3, 4, 9, 1, 2, 3} << 1 << 4 << Tokens{4, 9, 1, 2};
    QTest::newRow("the most recent occurrence")
        << Tokens{5, 6, 7, 5, 6, 8, 5, 6} << 1 << 3 << Tokens{8, 5, 6};
    QTest::newRow("a longer match beats a more recent one")
        << Tokens{1, 2, 3, 7, 9, 2, 3, 8, 1, 2, 3} << 1 << 2 << Tokens{7, 9};
    QTest::newRow("the four longest only")
        << Tokens{4, 1, 2, 3, 4, 5, 0, 2, 3, 4, 6, 1, 2, 3, 4} << 1 << 2 << Tokens{5, 0};
    QTest::newRow("a run goes on") << Tokens{7, 7, 7} << 1 << 4 << Tokens{7, 7, 7, 7};
    QTest::newRow("a period goes on") << Tokens{1, 2, 3, 2, 3} << 1 << 5 << Tokens{2, 3, 2, 3, 2};
    QTest::newRow("nothing recurs") << Tokens{1, 2, 3, 4} << 1 << 4 << Tokens{};
    QTest::newRow("one token matches") << Tokens{5, 1, 5} << 1 << 4 << Tokens{1, 5, 1, 5};
    QTest::newRow("too short for the shortest") << Tokens{5, 1, 5} << 2 << 4 << Tokens{};
    QTest::newRow("no tokens wanted") << Tokens{1, 2, 1, 2} << 1 << 0 << Tokens{};
    QTest::newRow("one token of history") << Tokens{3} << 1 << 4 << Tokens{};
    QTest::newRow("empty history") << Tokens{} << 1 << 4 << Tokens{};
  }

  void proposals() {
    QFETCH(Tokens, history);
    QFETCH(int, shortest);
    QFETCH(int, max_tokens);
    QFETCH(Tokens, expected);
    const NgramDrafter drafter(NgramSettings{4, shortest});
    QCOMPARE(drafter.draft(history, max_tokens), expected);
  }

  void settingsOutOfRangeAreRefused() {
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, NgramDrafter(NgramSettings{4, 0}));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, NgramDrafter(NgramSettings{2, 3}));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, NgramDrafter(NgramSettings{65, 1}));
    QCOMPARE(NgramDrafter(NgramSettings{1, 1}).settings().longest, 1);
  }
};

QUIRE_TEST(NgramDrafterTest)
#include "test_ngram_drafter.moc"
