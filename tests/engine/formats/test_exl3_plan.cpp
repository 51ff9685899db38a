// exllamav3's allocation of EXL3 widths: whole targets give every tensor
// that width; fractional ones raise attention before the MLP and the layers
// at either end of the stack first, never past the budget or 8 bits.

#include <QTest>
#include <vector>

#include "quire/engine/formats/exl3_plan.h"
#include "test_main.h"

using namespace quire::engine::formats;

namespace {

// The demo model's groups: 6 layers, hidden 256, K/V 128, MLP 768.
std::vector<Exl3BitGroup> demo_groups() {
  std::vector<Exl3BitGroup> groups;
  for (int layer = 0; layer < 6; ++layer) {
    groups.push_back({256 * 512, 2, layer});      // q, k, v
    groups.push_back({256 * 256, 2, layer});      // o
    groups.push_back({2 * 256 * 768, 1, layer});  // gate, up
    groups.push_back({768 * 256, 1, layer});      // down
  }
  return groups;
}

}  // namespace

class Exl3PlanTest : public QObject {
  Q_OBJECT

 private slots:
  void wholeTargetsGiveEveryGroupThatWidth() {
    for (const int bits : {1, 2, 4, 8}) {
      const Exl3BitPlan plan = plan_exl3_bits(demo_groups(), bits);
      QCOMPARE(plan.bits, std::vector<int>(24, bits));
      QCOMPARE(plan.bits_per_weight, double(bits));
    }
  }

  void attentionAndTheEndsOfTheStackComeFirst() {
    // Two layers: both attention groups lie at an end, and fill the budget.
    const std::vector<Exl3BitGroup> small{{100, 2, 0}, {100, 1, 0}, {100, 2, 1}, {100, 1, 1}};
    QCOMPARE(plan_exl3_bits(small, 4.5).bits, (std::vector<int>{5, 4, 5, 4}));
    QCOMPARE(plan_exl3_bits(small, 4.75).bits, (std::vector<int>{5, 5, 5, 4}));

    const std::vector<Exl3BitGroup> groups = demo_groups();
    const Exl3BitPlan plan = plan_exl3_bits(groups, 3.5);
    std::int64_t weights = 0, bits = 0;
    for (std::size_t i = 0; i < groups.size(); ++i) {
      weights += groups[i].weights;
      bits += groups[i].weights * plan.bits[i];
    }
    QCOMPARE(plan.bits_per_weight, double(bits) / double(weights));
    QVERIFY(plan.bits_per_weight <= 3.5 && plan.bits_per_weight > 3.45);
    // Attention is a quarter of the weights: every attention group is raised
    // first, then the MLP of the outer layers, not the inner ones'.
    for (int layer = 0; layer < 6; ++layer) {
      QCOMPARE(plan.bits[std::size_t(4 * layer)], 4);
      QCOMPARE(plan.bits[std::size_t(4 * layer + 1)], 4);
    }
    for (const std::size_t outer : {2, 3, 22, 23})  // layers 0 and 5: gate and up, down
      QCOMPARE(plan.bits[outer], 4);
    for (const std::size_t inner : {6, 7, 10, 11, 14, 15, 18, 19})
      QCOMPARE(plan.bits[inner], 3);
    // Whatever is left could not raise any group that is still below 8.
    const std::int64_t left = static_cast<std::int64_t>(3.5 * double(weights)) - bits;
    for (std::size_t i = 0; i < groups.size(); ++i)
      QVERIFY(plan.bits[i] == 8 || groups[i].weights > left);
  }

  void neverPastEightBits() {
    const Exl3BitPlan plan = plan_exl3_bits(demo_groups(), 7.9);
    for (const int bits : plan.bits)
      QVERIFY(bits == 7 || bits == 8);
    QVERIFY(plan.bits_per_weight <= 7.9);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, plan_exl3_bits(demo_groups(), 8.5));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, plan_exl3_bits(demo_groups(), 0.5));
  }
};

QUIRE_TEST(Exl3PlanTest)
#include "test_exl3_plan.moc"
