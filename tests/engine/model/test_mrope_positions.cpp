// engine::mrope_positions against transformers' get_rope_index: every
// expected id below was printed by tests/tools/reference_mrope.py, a numpy
// port of Qwen2_5_VLModel.get_rope_index, for the prompts written beside
// them (vision-start 5, image token 9, vision-end 6; grids in patches,
// merged 2 x 2 into the grids given here).

#include <QTest>
#include <stdexcept>
#include <vector>

#include "quire/engine/model/mrope_positions.h"
#include "test_main.h"

using namespace quire::engine;

namespace {

// transformers' 3 x N rows, from our [N][3].
std::vector<std::vector<std::int32_t>> rows(const MropePositions& positions) {
  std::vector<std::vector<std::int32_t>> out(3);
  for (std::size_t i = 0; i < positions.ids.size(); ++i)
    out[i % 3].push_back(positions.ids[i]);
  return out;
}

constexpr std::int32_t kImage = 9;

}  // namespace

class MropePositionsTest : public QObject {
  Q_OBJECT

 private slots:
  void twoImagesWithTextBetween() {
    // image_grid_thw [[1, 4, 6], [1, 6, 8]]: 2 x 3 and 3 x 4 merged tokens.
    const std::vector<std::int32_t> tokens{11, 12, 13, 5, 9, 9, 9, 9, 9, 9, 6, 21, 22, 5,  9,
                                           9,  9,  9,  9, 9, 9, 9, 9, 9, 9, 9, 6,  31, 32, 33};
    const std::vector<MropeImageGrid> grids{{1, 2, 3}, {1, 3, 4}};
    const MropePositions got = mrope_positions(tokens, kImage, grids);
    const std::vector<std::vector<std::int32_t>> expected{
        {0,  1,  2,  3,  4,  4,  4,  4,  4,  4,  7,  8,  9,  10, 11,
         11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 15, 16, 17, 18},
        {0,  1,  2,  3,  4,  4,  4,  5,  5,  5,  7,  8,  9,  10, 11,
         11, 11, 11, 12, 12, 12, 12, 13, 13, 13, 13, 15, 16, 17, 18},
        {0,  1,  2,  3,  4,  5,  6,  4,  5,  6,  7,  8,  9,  10, 11,
         12, 13, 14, 11, 12, 13, 14, 11, 12, 13, 14, 15, 16, 17, 18}};
    QCOMPARE(rows(got), expected);
    QCOMPARE(got.delta, -11);
  }

  void anImageFirstAndOneOfTwoFrames_data() {
    QTest::addColumn<bool>("numbered");
    QTest::addColumn<std::vector<std::int32_t>>("temporal");
    QTest::newRow("Qwen2.5-VL") << false << std::vector<std::int32_t>{0, 1, 1, 1, 1, 1, 1, 4,
                                                                      5, 6, 6, 6, 6, 8, 9};
    // reference_mrope.py --number-frames: Qwen2-VL's rule.
    QTest::newRow("Qwen2-VL") << true << std::vector<std::int32_t>{0, 1, 1, 1, 1, 1, 1, 4,
                                                                   5, 6, 6, 7, 7, 8, 9};
  }

  void anImageFirstAndOneOfTwoFrames() {
    QFETCH(bool, numbered);
    QFETCH(std::vector<std::int32_t>, temporal);
    // image_grid_thw [[1, 4, 6], [2, 2, 4]].
    const std::vector<std::int32_t> tokens{5, 9, 9, 9, 9, 9, 9, 6, 5, 9, 9, 9, 9, 6, 40};
    const std::vector<MropeImageGrid> grids{{1, 2, 3}, {2, 1, 2}};
    const MropePositions got = mrope_positions(
        tokens, kImage, grids, numbered ? MropeFrames::Numbered : MropeFrames::Zero);
    const std::vector<std::vector<std::int32_t>> expected{
        temporal,
        {0, 1, 1, 1, 2, 2, 2, 4, 5, 6, 6, 6, 6, 8, 9},
        {0, 1, 2, 3, 1, 2, 3, 4, 5, 6, 7, 6, 7, 8, 9}};
    QCOMPARE(rows(got), expected);
    QCOMPARE(got.delta, -5);
  }

  void textAloneCountsItsSlots() {
    const std::vector<std::int32_t> tokens{3, 1, 4, 1, 5};
    const MropePositions got = mrope_positions(tokens, kImage, {});
    QCOMPARE(got.ids, (std::vector<std::int32_t>{0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4}));
    QCOMPARE(got.delta, 0);
  }

  void imageTokensMustMatchTheGrids() {
    const std::vector<std::int32_t> tokens{1, 9, 9, 9, 2};
    const std::vector<MropeImageGrid> four{{1, 2, 2}};
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, mrope_positions(tokens, kImage, four));
    const std::vector<MropeImageGrid> one{{1, 1, 1}};
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, mrope_positions(tokens, kImage, one));
    const std::vector<MropeImageGrid> two{{1, 1, 3}, {1, 1, 1}};
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, mrope_positions(tokens, kImage, two));
    const std::vector<MropeImageGrid> empty{{1, 0, 3}};
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, mrope_positions(tokens, kImage, empty));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, mrope_positions(tokens, kImage, {}));
  }
};

QUIRE_TEST(MropePositionsTest)
#include "test_mrope_positions.moc"
