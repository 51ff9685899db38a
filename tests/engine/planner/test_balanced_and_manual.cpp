#include <QTest>

#include "planner_test_helpers.h"
#include "test_main.h"

using namespace quire::engine;
using namespace quire::engine::testing;

class BalancedAndManualTest : public QObject {
  Q_OBJECT

 private slots:
  // Equal 100 MiB layers, no reserve: Balanced makes the fullest device as
  // empty as possible, as a fraction of each device's usable memory.
  void balancedSpreadsByFraction_data() {
    QTest::addColumn<QList<qint64>>("freeMib");
    QTest::addColumn<int>("layers");
    QTest::addColumn<QList<int>>("counts");
    // 8 of 2000 and 4 of 1000 are both 40%; fill-in-order would put all on device 0.
    QTest::newRow("2:1") << QList<qint64>{2000, 1000} << 12 << QList<int>{8, 4};
    // 30% everywhere.
    QTest::newRow("3:2:1") << QList<qint64>{3000, 2000, 1000} << 18 << QList<int>{9, 6, 3};
    // 9/20 = 45% and 4/10 = 40% beats 8/20 = 40% and 5/10 = 50%.
    QTest::newRow("odd count") << QList<qint64>{2000, 1000} << 13 << QList<int>{9, 4};
    QTest::newRow("equal") << QList<qint64>{1000, 1000} << 10 << QList<int>{5, 5};
    // The smaller device first: 4/1000 and 8/2000.
    QTest::newRow("small first") << QList<qint64>{1000, 2000} << 12 << QList<int>{4, 8};
    // A 50 MiB device cannot take a 100 MiB layer and is passed over.
    QTest::newRow("tiny skipped") << QList<qint64>{2000, 50, 1000} << 12 << QList<int>{8, 0, 4};
  }

  void balancedSpreadsByFraction() {
    QFETCH(QList<qint64>, freeMib);
    QFETCH(int, layers);
    QFETCH(QList<int>, counts);
    PlacementRequest request;
    request.modules = layers_only(layers, 100 * MiB);
    for (int i = 0; i < freeMib.size(); ++i) {
      request.devices.push_back(device(i, "D" + std::to_string(i), freeMib[i] * MiB));
    }
    request.policy.default_reserve_bytes = 0;
    request.policy.mode = PlacementMode::Balanced;
    const PlacementPlan plan = plan_placement(request);
    QVERIFY(plan.fits);
    QCOMPARE(counts_of(plan), counts);
    int next = 0;
    for (const ModulePlacement& module : plan.modules) {
      QVERIFY(module.slot >= next);  // order kept
      next = module.slot;
    }
  }

  // With the lazy cache, Balanced weighs each layer with its pages: the 2:1
  // split holds at any context, and the cache follows the layers.
  void balancedCountsTheCache() {
    PlacementRequest request;
    request.modules.clear();
    for (int i = 0; i < 12; ++i)
      request.modules.push_back(layer(i, 60 * MiB, 10 * MiB));
    request.context_tokens = 4 * 256;  // each layer 60 + 40 = 100 MiB
    request.devices = {device(0, "big", 2000 * MiB), device(1, "small", 1000 * MiB)};
    request.policy.default_reserve_bytes = 0;
    request.policy.mode = PlacementMode::Balanced;
    const PlacementPlan plan = plan_placement(request);
    QVERIFY(plan.fits);
    QCOMPARE(counts_of(plan), (QList<int>{8, 4}));
    QCOMPARE(plan.devices[0].cache, 320 * MiB);
    QCOMPARE(plan.devices[1].cache, 160 * MiB);
    QCOMPARE(plan.devices[0].planned, 800 * MiB);
    QCOMPARE(plan.devices[1].planned, 400 * MiB);
  }

  // Balanced fits exactly when fill-in-order does, so the largest context is
  // the same; only the spread differs.
  void balancedAndFillAgreeOnFitting() {
    for (const std::int64_t tokens :
         {std::int64_t(0), std::int64_t(2048), std::int64_t(4096), std::int64_t(8192)}) {
      PlacementRequest fill = model_a(tokens);
      PlacementRequest balanced = model_a(tokens);
      balanced.policy.mode = PlacementMode::Balanced;
      const PlacementPlan a = plan_placement(fill);
      const PlacementPlan b = plan_placement(balanced);
      QCOMPARE(a.fits, b.fits);
      QVERIFY(a.largest_context && b.largest_context);
      QCOMPARE(a.largest_context->pages, b.largest_context->pages);
    }
  }

  // Manual: fill in order, each device up to its limit.
  void manualLimitsAreFilledInOrder() {
    PlacementRequest request;
    request.modules = layers_only(12, 100 * MiB);
    request.devices = {device(0, "A", 2000 * MiB), device(1, "B", 2000 * MiB)};
    request.policy.default_reserve_bytes = 0;
    request.policy.mode = PlacementMode::Manual;
    request.policy.manual_limit_bytes = {650 * MiB, 2000 * MiB};
    const PlacementPlan plan = plan_placement(request);
    QVERIFY(plan.fits);
    QCOMPARE(counts_of(plan), (QList<int>{6, 6}));
    QCOMPARE(plan.devices[0].usable, 650 * MiB);
    QVERIFY(plan.devices[0].limited_by_manual);
    QCOMPARE(plan.devices[1].usable, 2000 * MiB);
    QVERIFY(!plan.devices[1].limited_by_manual);
    QVERIFY(plan.notes.empty());
  }

  // A limit above what is free after the reserve: the smaller wins, and the
  // plan says so.
  void manualLimitAboveFreeMemoryIsLowered() {
    PlacementRequest request;
    request.modules = layers_only(29, 100 * MiB);
    request.devices = {device(0, "A", 2000 * MiB), device(1, "B", 2000 * MiB)};
    request.policy.reserve_bytes = {0, 100 * MiB};
    request.policy.mode = PlacementMode::Manual;
    request.policy.manual_limit_bytes = {1000 * MiB, 5000 * MiB};
    const PlacementPlan plan = plan_placement(request);
    QVERIFY(plan.fits);
    QCOMPARE(counts_of(plan), (QList<int>{10, 19}));
    QCOMPARE(plan.devices[1].usable, 1900 * MiB);
    QVERIFY(!plan.devices[1].limited_by_manual);
    QCOMPARE(plan.notes.size(), std::size_t(1));
    QCOMPARE(plan.notes[0], std::string("device 1 (B): manual limit of 5000 MiB is more than the "
                                        "1900 MiB free after the 100 MiB reserve; planning with "
                                        "1900 MiB"));
  }

  // A device without a limit is not used; an explicit 0 means the same,
  // silently. Here the weights then cannot fit, and the message names the limit.
  void manualWithoutLimitLeavesDeviceOut() {
    PlacementRequest request;
    request.modules = layers_only(12, 100 * MiB);
    request.devices = {device(0, "A", 2000 * MiB), device(1, "B", 2000 * MiB)};
    request.policy.default_reserve_bytes = 0;
    request.policy.mode = PlacementMode::Manual;
    request.policy.manual_limit_bytes = {600 * MiB};
    const PlacementPlan plan = plan_placement(request);
    QVERIFY(!plan.fits);
    QCOMPARE(plan.notes, std::vector<std::string>{"device 1 (B): no manual limit given; not used"});
    QVERIFY(!plan.largest_context);
    QCOMPARE(plan.problem,
             std::string("does not fit even with no context: the weights and scratch alone need "
                         "1200 MiB on device 0 (A), has a manual limit of 600 MiB — raise the "
                         "manual limit, use a smaller quantization, or add a device"));
    // The overflow is shown where it lands.
    QCOMPARE(plan.devices[0].module_count, 12);
    QCOMPARE(plan.devices[0].free_after, 800 * MiB);

    request.policy.manual_limit_bytes = {600 * MiB, 0};
    const PlacementPlan zero = plan_placement(request);
    QVERIFY(zero.notes.empty());
    QCOMPARE(zero.devices[1].usable, std::int64_t(0));
  }
};

QUIRE_TEST(BalancedAndManualTest)
#include "test_balanced_and_manual.moc"
