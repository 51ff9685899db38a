#include <QTest>

#include "planner_test_helpers.h"
#include "test_main.h"

using namespace quire::engine;
using namespace quire::engine::testing;

class FillInOrderTest : public QObject {
  Q_OBJECT

 private slots:
  // Model A (planner_test_helpers.h), 964 MiB usable per device. A layer costs
  // 200 MiB + 10 MiB per page; the first module on a device also pays the
  // 64 MiB device scratch; the head pays its 50 MiB logits scratch.
  void exactPerDeviceNumbers_data() {
    QTest::addColumn<qint64>("tokens");
    QTest::addColumn<qint64>("contextTokens");
    QTest::addColumn<QList<int>>("moduleSlots");
    QTest::addColumn<QList<qint64>>("weights");  // MiB, per device
    QTest::addColumn<QList<qint64>>("cache");
    QTest::addColumn<QList<qint64>>("scratch");
    QTest::addColumn<QList<qint64>>("planned");
    QTest::addColumn<QList<qint64>>("freeAfter");
    // Layers of 200: 64 + 100 + 4 x 200 = 964 fills device 0 to the byte; the
    // head goes to device 1: 64 + 150 + 50 = 264.
    QTest::newRow("no context") << qint64(0) << qint64(0) << QList<int>{0, 0, 0, 0, 0, 1}
                                << QList<qint64>{900, 150} << QList<qint64>{0, 0}
                                << QList<qint64>{64, 114} << QList<qint64>{964, 264}
                                << QList<qint64>{36, 736};
    // 4 pages: layers of 240. Device 0: 164 + 3 x 240 = 884 (a 4th would make
    // 1124). Device 1: 64 + 240 + 150 + 50 = 504.
    QTest::newRow("4 pages") << qint64(1024) << qint64(1024) << QList<int>{0, 0, 0, 0, 1, 1}
                             << QList<qint64>{700, 350} << QList<qint64>{120, 40}
                             << QList<qint64>{64, 114} << QList<qint64>{884, 504}
                             << QList<qint64>{116, 496};
    // 1000 tokens round up to the same 4 pages.
    QTest::newRow("1000 tokens") << qint64(1000) << qint64(1024) << QList<int>{0, 0, 0, 0, 1, 1}
                                 << QList<qint64>{700, 350} << QList<qint64>{120, 40}
                                 << QList<qint64>{64, 114} << QList<qint64>{884, 504}
                                 << QList<qint64>{116, 496};
    // 8 pages: layers of 280. Device 0: 164 + 2 x 280 = 724 (a 3rd: 1004).
    // Device 1: 64 + 2 x 280 + 200 = 824.
    QTest::newRow("8 pages") << qint64(2048) << qint64(2048) << QList<int>{0, 0, 0, 1, 1, 1}
                             << QList<qint64>{500, 550} << QList<qint64>{160, 160}
                             << QList<qint64>{64, 114} << QList<qint64>{724, 824}
                             << QList<qint64>{276, 176};
  }

  void exactPerDeviceNumbers() {
    QFETCH(qint64, tokens);
    QFETCH(qint64, contextTokens);
    QFETCH(QList<int>, moduleSlots);
    QFETCH(QList<qint64>, weights);
    QFETCH(QList<qint64>, cache);
    QFETCH(QList<qint64>, scratch);
    QFETCH(QList<qint64>, planned);
    QFETCH(QList<qint64>, freeAfter);
    const PlacementPlan plan = plan_placement(model_a(tokens));
    QVERIFY(plan.fits);
    QVERIFY(plan.problem.empty());
    QVERIFY(!plan.shortfall);
    QCOMPARE(plan.context_tokens, contextTokens);
    QCOMPARE(plan.pages, contextTokens / 256);
    QCOMPARE(slots_of(plan), moduleSlots);
    QCOMPARE(plan.devices.size(), std::size_t(2));
    for (int d = 0; d < 2; ++d) {
      const DevicePlacement& device = plan.devices[static_cast<std::size_t>(d)];
      QCOMPARE(device.index, d);
      QCOMPARE(device.total_bytes, 1024 * MiB);
      QCOMPARE(device.free_before, 1000 * MiB);
      QCOMPARE(device.reserve, 36 * MiB);
      QCOMPARE(device.usable, 964 * MiB);
      QCOMPARE(device.weights, weights[d] * MiB);
      QCOMPARE(device.cache, cache[d] * MiB);
      QCOMPARE(device.scratch, scratch[d] * MiB);
      QCOMPARE(device.planned, planned[d] * MiB);
      QCOMPARE(device.free_after, freeAfter[d] * MiB);
      QVERIFY(device.free_after >= device.reserve);
    }
    QCOMPARE(plan.devices[0].first_module, 0);
    QCOMPARE(plan.devices[1].first_module, moduleSlots.indexOf(1));
    QCOMPARE(plan.devices[0].module_count + plan.devices[1].module_count, 6);
  }

  // The cache is lazy: each attention layer's pages are priced on the device
  // that holds that layer, and modules without attention bring none.
  void cacheLandsWithTheAttentionLayers() {
    PlacementRequest request;
    request.modules = {embedding(100 * MiB),
                       layer(0, 300 * MiB, 7 * MiB),
                       layer(1, 300 * MiB, 0),  // no attention: no cache
                       layer(2, 300 * MiB, 5 * MiB),
                       layer(3, 300 * MiB, 3 * MiB),
                       head(100 * MiB, 0)};
    request.context_tokens = 10 * 256;
    request.devices = {device(0, "A", 1000 * MiB), device(1, "B", 1000 * MiB)};
    request.policy.default_reserve_bytes = 0;
    const PlacementPlan plan = plan_placement(request);
    QVERIFY(plan.fits);
    // Device 0: 100 + (300 + 70) + 300 = 770; layer 2 (350) would make 1120.
    QCOMPARE(slots_of(plan), (QList<int>{0, 0, 0, 1, 1, 1}));
    QCOMPARE(plan.modules[1].cache_bytes, 70 * MiB);
    QCOMPARE(plan.modules[2].cache_bytes, std::int64_t(0));
    QCOMPARE(plan.modules[3].cache_bytes, 50 * MiB);
    QCOMPARE(plan.modules[4].cache_bytes, 30 * MiB);
    QCOMPARE(plan.devices[0].cache, 70 * MiB);
    QCOMPARE(plan.devices[1].cache, 80 * MiB);
    QCOMPARE(plan.devices[0].weights, 700 * MiB);
    QCOMPARE(plan.devices[1].weights, 700 * MiB);
    QCOMPARE(plan.modules[3].device, 1);
    QCOMPARE(plan.modules[3].name, std::string("model.layers.2"));
  }

  // Device 1 has free memory, but not enough after its reserve for any single
  // module: it is passed over and device 2 continues the model.
  void deviceTooSmallForAnyModuleIsSkipped() {
    PlacementRequest request;
    request.modules = layers_only(6, 100 * MiB);
    request.devices = {device(0, "A", 400 * MiB), device(1, "tiny", 90 * MiB),
                       device(2, "C", 400 * MiB)};
    request.policy.default_reserve_bytes = 0;
    const PlacementPlan plan = plan_placement(request);
    QVERIFY(plan.fits);
    QCOMPARE(counts_of(plan), (QList<int>{4, 0, 2}));
    QCOMPARE(plan.devices[1].planned, std::int64_t(0));
    QCOMPARE(plan.devices[1].scratch, std::int64_t(0));
    QCOMPARE(plan.devices[1].first_module, -1);
    QCOMPARE(plan.notes.size(), std::size_t(1));
    QCOMPARE(plan.notes[0],
             std::string("device 1 (tiny) has 90 MiB free after the 0 MiB reserve, too little "
                         "for any module (the smallest, model.layers.0, needs 100 MiB with "
                         "scratch); not used"));
  }

  // Devices are listed in the order the hidden state passes through them; a
  // device's backend index need not match its position.
  void backendIndicesAreCarried() {
    PlacementRequest request;
    request.modules = layers_only(4, 100 * MiB);
    request.devices = {device(3, "third", 200 * MiB), device(1, "first", 200 * MiB)};
    request.policy.default_reserve_bytes = 0;
    const PlacementPlan plan = plan_placement(request);
    QVERIFY(plan.fits);
    QCOMPARE(plan.devices[0].index, 3);
    QCOMPARE(plan.modules[0].device, 3);
    QCOMPARE(plan.modules[0].slot, 0);
    QCOMPARE(plan.modules[3].device, 1);
    QCOMPARE(plan.modules[3].slot, 1);
  }
};

QUIRE_TEST(FillInOrderTest)
#include "test_fill_in_order.moc"
