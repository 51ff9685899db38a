#include <QTest>

#include "planner_test_helpers.h"
#include "test_main.h"

using namespace quire::engine;
using namespace quire::engine::testing;

Q_DECLARE_METATYPE(PlacementRequest)
Q_DECLARE_METATYPE(Shortfall::Kind)

namespace {

PlacementRequest with_devices(PlacementRequest request, std::vector<PlanDevice> devices) {
  request.devices = std::move(devices);
  return request;
}

}  // namespace

class DoesNotFitTest : public QObject {
  Q_OBJECT

 private slots:
  void messagesSayWhatToDo_data() {
    QTest::addColumn<PlacementRequest>("request");
    QTest::addColumn<Shortfall::Kind>("kind");
    QTest::addColumn<int>("slot");
    QTest::addColumn<qint64>("needed");
    QTest::addColumn<qint64>("usable");
    QTest::addColumn<bool>("withoutContext");
    QTest::addColumn<qint64>("largestTokens");  // -1: not even the weights fit
    QTest::addColumn<QString>("message");

    // (a) Context too large. Model A at 32 pages: layers of 520 MiB. Device 0
    // takes 64 + 100 + 520 = 684 (a 2nd layer: 1204 > 964); device 1 would
    // need 64 + 3 x 520 + 150 + 50 = 1824. The largest context is 15 pages:
    // layers of 350, device 0 164 + 2 x 350 = 864, device 1 64 + 2 x 350 +
    // 200 = 964, exactly its usable memory; at 16 pages device 1 needs 984.
    QTest::newRow("context too large")
        << model_a(8192) << Shortfall::Kind::Overflow << 1 << qint64(1824 * MiB)
        << qint64(964 * MiB) << false << qint64(3840)
        << QString(
               "does not fit: needs 1824 MiB on device 1 (B), has 964 MiB free after the "
               "36 MiB reserve — lower the context to 3840 tokens, use a smaller cache "
               "format, or add a device");

    // (b) Weights too large: six 400 MiB layers. With no cache, device 0
    // takes 64 + 100 + 2 x 400 = 964; device 1 would need 64 + 4 x 400 + 200.
    PlacementRequest heavy = model_a(4096);
    heavy.modules = simple_model(6, 100 * MiB, 400 * MiB, 10 * MiB, 150 * MiB, 50 * MiB);
    QTest::newRow("weights too large")
        << heavy << Shortfall::Kind::Overflow << 1 << qint64(1864 * MiB) << qint64(964 * MiB)
        << true << qint64(-1)
        << QString(
               "does not fit even with no context: the weights and scratch alone need "
               "1864 MiB on device 1 (B), has 964 MiB free after the 36 MiB reserve — use "
               "a smaller quantization or add a device");

    // Weights fit to the byte (device 0: 964, device 1: 264 of 264), one page
    // does not: device 1 would need 64 + 210 + 150 + 50 = 474.
    QTest::newRow("no room for a page")
        << with_devices(model_a(256), {device(0, "A", 1000 * MiB), device(1, "B", 300 * MiB)})
        << Shortfall::Kind::Overflow << 1 << qint64(474 * MiB) << qint64(264 * MiB) << false
        << qint64(0)
        << QString(
               "does not fit: needs 474 MiB on device 1 (B), has 264 MiB free after the "
               "36 MiB reserve — the weights leave no room for one 256-token page of cache; "
               "use a smaller cache format or add a device");

    // A head bigger than any device: named as the thing to fix.
    PlacementRequest big_head = model_a(0);
    big_head.modules.back().weight_bytes = 2000 * MiB;
    QTest::newRow("module bigger than every device")
        << big_head << Shortfall::Kind::Overflow << 1 << qint64(2114 * MiB) << qint64(964 * MiB)
        << true << qint64(-1)
        << QString(
               "does not fit even with no context: the weights and scratch alone need "
               "2114 MiB on device 1 (B), has 964 MiB free after the 36 MiB reserve; "
               "lm_head alone needs 2114 MiB with scratch, more than any device offers — "
               "use a smaller quantization or add a device");

    // Devices with 50 MiB usable: not even the 100 MiB embedding fits.
    QTest::newRow("no device holds a module")
        << with_devices(model_a(1024), {device(0, "A", 86 * MiB), device(1, "B", 86 * MiB)})
        << Shortfall::Kind::NoRoomAnywhere << 0 << qint64(164 * MiB) << qint64(50 * MiB) << true
        << qint64(-1)
        << QString(
               "does not fit even with no context: no device can hold even one module: the "
               "smallest, model.embed_tokens, needs 164 MiB with scratch, and the largest, "
               "device 0 (A), has 50 MiB free after the 36 MiB reserve — use a smaller "
               "quantization or add a device");

    // One layer whose cache alone outgrows the device; lowering the context
    // helps: (964 - 64 - 200) / 100 = 7 pages.
    PlacementRequest one_layer = model_a(100 * 256);
    one_layer.modules = {layer(0, 200 * MiB, 100 * MiB)};
    one_layer.devices.pop_back();
    QTest::newRow("one layer, huge context")
        << one_layer << Shortfall::Kind::NoRoomAnywhere << 0 << qint64(10264 * MiB)
        << qint64(964 * MiB) << false << qint64(1792)
        << QString(
               "does not fit: no device can hold even one module: the smallest, "
               "model.layers.0, needs 10264 MiB with scratch, and the largest, device 0 (A), "
               "has 964 MiB free after the 36 MiB reserve — lower the context to 1792 "
               "tokens, use a smaller cache format, or add a device");

    // Reserve above free memory on every device.
    PlacementRequest reserved =
        with_devices(model_a(0), {device(0, "A", 100 * MiB), device(1, "B", 200 * MiB)});
    reserved.policy.default_reserve_bytes = 256 * MiB;
    QTest::newRow("reserve above free")
        << reserved << Shortfall::Kind::NoRoomAnywhere << 0 << qint64(164 * MiB) << qint64(0)
        << true << qint64(-1)
        << QString(
               "does not fit even with no context: no device can hold even one module: the "
               "smallest, model.embed_tokens, needs 164 MiB with scratch, and the largest, "
               "device 0 (A), has 0 MiB free after the 256 MiB reserve — use a smaller "
               "quantization or add a device");

    // What is needed rounds up, what is free rounds down, a reserve that is
    // not whole MiB keeps a decimal: 6 x (100 MiB + 1) against 500.5 MiB.
    PlacementRequest odd;
    odd.modules = layers_only(6, 100 * MiB + 1);
    odd.devices = {device(0, "A", 500 * MiB + 100'000'000 + 512 * 1024)};
    odd.policy.default_reserve_bytes = 100'000'000;
    QTest::newRow("rounding stays true")
        << odd << Shortfall::Kind::Overflow << 0 << qint64(600 * MiB + 6)
        << qint64(500 * MiB + 512 * 1024) << true << qint64(-1)
        << QString(
               "does not fit even with no context: the weights and scratch alone need "
               "601 MiB on device 0 (A), has 500 MiB free after the 95.4 MiB reserve — use "
               "a smaller quantization or add a device");

    QTest::newRow("no devices") << with_devices(model_a(1024), {}) << Shortfall::Kind::NoDevices
                                << -1 << qint64(0) << qint64(0) << false << qint64(-1)
                                << QString(
                                       "does not fit: there is no device to place the model on");
  }

  void messagesSayWhatToDo() {
    QFETCH(PlacementRequest, request);
    QFETCH(Shortfall::Kind, kind);
    QFETCH(int, slot);
    QFETCH(qint64, needed);
    QFETCH(qint64, usable);
    QFETCH(bool, withoutContext);
    QFETCH(qint64, largestTokens);
    QFETCH(QString, message);
    const PlacementPlan plan = plan_placement(request);
    QVERIFY(!plan.fits);
    QVERIFY(plan.shortfall.has_value());
    QCOMPARE(plan.shortfall->kind, kind);
    QCOMPARE(plan.shortfall->slot, slot);
    QCOMPARE(plan.shortfall->needed, needed);
    QCOMPARE(plan.shortfall->usable, usable);
    QCOMPARE(plan.shortfall->without_context, withoutContext);
    QCOMPARE(QString::fromStdString(plan.problem), message);
    if (largestTokens < 0) {
      QVERIFY(!plan.largest_context);
    } else {
      QVERIFY(plan.largest_context);
      QCOMPARE(plan.largest_context->tokens, largestTokens);
      // The suggested context really fits, and one more page does not.
      QVERIFY(fits_with(request, largestTokens));
      QVERIFY(!fits_with(request, largestTokens + request.page_size));
    }
  }

  // The devices of a plan that does not fit show where the overflow lands.
  void overflowIsShownOnTheLastDevice() {
    const PlacementPlan plan = plan_placement(model_a(8192));
    QCOMPARE(slots_of(plan), (QList<int>{0, 0, 1, 1, 1, 1}));
    QCOMPARE(plan.devices[0].planned, 684 * MiB);
    QCOMPARE(plan.devices[1].planned, 1824 * MiB);
    QCOMPARE(plan.devices[1].free_after, -824 * MiB);
    QCOMPARE(plan.devices[1].cache, 3 * 320 * MiB);
  }

  void reserveAboveFreeIsNoted() {
    PlacementRequest request = model_a(0);
    request.devices.insert(request.devices.begin(), device(5, "busy", 100 * MiB));
    request.policy.reserve_bytes = {256 * MiB};
    const PlacementPlan plan = plan_placement(request);
    QVERIFY(plan.fits);
    QCOMPARE(plan.devices[0].usable, std::int64_t(0));
    QCOMPARE(plan.devices[0].module_count, 0);
    QCOMPARE(plan.notes, std::vector<std::string>{
                             "device 5 (busy): 100 MiB free is no more than its 256 MiB reserve; "
                             "not used"});
    QCOMPARE(plan.devices[1].reserve, 36 * MiB);  // the default still applies to the others
  }
};

QUIRE_TEST(DoesNotFitTest)
#include "test_does_not_fit.moc"
