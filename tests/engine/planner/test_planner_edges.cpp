#include <QTest>
#include <cstdint>
#include <limits>
#include <stdexcept>

#include "planner_test_helpers.h"
#include "test_main.h"

using namespace quire::engine;
using namespace quire::engine::testing;

class PlannerEdgesTest : public QObject {
  Q_OBJECT

  static std::uint64_t next(std::uint64_t& state) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return state >> 33;
  }

 private slots:
  void zeroDevices() {
    PlacementRequest request = model_a(1024);
    request.devices.clear();
    const PlacementPlan plan = plan_placement(request);
    QVERIFY(!plan.fits);
    QVERIFY(plan.devices.empty());
    QCOMPARE(plan.modules.size(), std::size_t(6));
    for (const ModulePlacement& module : plan.modules)
      QCOMPARE(module.slot, -1);
    QVERIFY(!plan.largest_context);
    QCOMPARE(plan.shortfall->kind, Shortfall::Kind::NoDevices);
  }

  // Nothing to place fits anywhere, even on no device, and uses nothing.
  void zeroModules() {
    PlacementRequest request = model_a(1024);
    request.modules.clear();
    const PlacementPlan plan = plan_placement(request);
    QVERIFY(plan.fits);
    QCOMPARE(plan.devices[0].planned, std::int64_t(0));
    QCOMPARE(plan.devices[0].scratch, std::int64_t(0));
    request.devices.clear();
    QVERIFY(plan_placement(request).fits);
  }

  // A device exactly full is fine; one byte more is not.
  void reserveIsHonouredToTheByte() {
    PlacementRequest request;
    request.modules = layers_only(8, 100 * MiB);
    request.devices = {device(0, "A", 1000 * MiB)};
    request.policy.reserve_bytes = {200 * MiB};
    PlacementPlan plan = plan_placement(request);
    QVERIFY(plan.fits);
    QCOMPARE(plan.devices[0].free_after, 200 * MiB);
    request.policy.reserve_bytes = {200 * MiB + 1};
    plan = plan_placement(request);
    QVERIFY(!plan.fits);
    QCOMPARE(plan.shortfall->needed, 800 * MiB);
    QCOMPARE(plan.shortfall->usable, 800 * MiB - 1);
  }

  // Byte counts near the validated maximum saturate instead of overflowing
  // (UBSan would stop the test on a signed overflow).
  void hugeNumbersSaturate() {
    PlacementRequest request;
    for (int i = 0; i < 40; ++i)
      request.modules.push_back(layer(i, kMaxPlanBytes, kMaxPlanBytes));
    request.device_scratch_bytes = kMaxPlanBytes;
    request.context_tokens = std::int64_t(std::numeric_limits<int>::max()) * 256;
    request.devices = {device(0, "A", kMaxPlanBytes), device(1, "B", kMaxPlanBytes)};
    const PlacementPlan plan = plan_placement(request);
    QVERIFY(!plan.fits);
    QVERIFY(!plan.largest_context);
    QVERIFY(!plan.problem.empty());
    QVERIFY(!describe_plan(plan).empty());

    // One layer whose weights and scratch fit exactly in 2^60 bytes.
    request.modules = {layer(0, kMaxPlanBytes / 2, 1)};
    request.device_scratch_bytes = kMaxPlanBytes / 2;
    request.policy.default_reserve_bytes = 0;
    const PlacementPlan one = plan_placement(request);
    QVERIFY(one.largest_context);
    QCOMPARE(one.largest_context->pages, std::int64_t(0));
  }

  void invalidInputsThrow_data() {
    QTest::addColumn<int>("which");
    QTest::newRow("page size 0") << 0;
    QTest::newRow("negative context") << 1;
    QTest::newRow("negative weights") << 2;
    QTest::newRow("beyond 2^60") << 3;
    QTest::newRow("negative reserve") << 4;
    QTest::newRow("negative limit") << 5;
    QTest::newRow("too many pages") << 6;
  }

  void invalidInputsThrow() {
    QFETCH(int, which);
    PlacementRequest request = model_a(1024);
    switch (which) {
      case 0:
        request.page_size = 0;
        break;
      case 1:
        request.context_tokens = -1;
        break;
      case 2:
        request.modules[1].weight_bytes = -5;
        break;
      case 3:
        request.devices[0].free_bytes = kMaxPlanBytes + 1;
        break;
      case 4:
        request.policy.reserve_bytes = {0, -1};
        break;
      case 5:
        request.policy.manual_limit_bytes = {-1};
        break;
      default:
        request.context_tokens = (std::int64_t(std::numeric_limits<int>::max()) + 1) * 256;
    }
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, plan_placement(request));
  }

  // Random requests: order is kept, bytes add up, a plan that fits keeps every
  // reserve, the same request gives the same plan, and a fitting plan never
  // claims more context than the largest one.
  void invariantsHoldOnRandomRequests() {
    std::uint64_t state = 12345;
    for (int round = 0; round < 300; ++round) {
      PlacementRequest request;
      const int layers = 1 + static_cast<int>(next(state) % 20);
      request.modules = simple_model(layers, static_cast<std::int64_t>(next(state) % 300) * MiB,
                                     static_cast<std::int64_t>(1 + next(state) % 200) * MiB,
                                     static_cast<std::int64_t>(next(state) % 8) * MiB,
                                     static_cast<std::int64_t>(next(state) % 300) * MiB,
                                     static_cast<std::int64_t>(next(state) % 50) * MiB);
      request.device_scratch_bytes = static_cast<std::int64_t>(next(state) % 100) * MiB;
      request.context_tokens = static_cast<std::int64_t>(next(state) % 20000);
      request.page_size = (next(state) % 2) == 0 ? 256 : 128;
      const int devices = static_cast<int>(next(state) % 4);
      for (int d = 0; d < devices; ++d) {
        request.devices.push_back(
            device(d, "D", static_cast<std::int64_t>(next(state) % 4000) * MiB + 12345));
        request.policy.manual_limit_bytes.push_back(static_cast<std::int64_t>(next(state) % 4000) *
                                                    MiB);
      }
      request.policy.default_reserve_bytes = static_cast<std::int64_t>(next(state) % 300) * MiB;
      request.policy.mode = static_cast<PlacementMode>(next(state) % 3);

      const PlacementPlan plan = plan_placement(request);
      QCOMPARE(describe_plan(plan_placement(request)), describe_plan(plan));
      QCOMPARE(plan.fits, !plan.shortfall.has_value());
      QCOMPARE(plan.fits, plan.problem.empty());
      int last = 0;
      std::int64_t weights = 0;
      for (const ModulePlacement& module : plan.modules) {
        if (module.slot < 0) continue;
        QVERIFY(module.slot >= last);
        last = module.slot;
      }
      for (const DevicePlacement& device : plan.devices) {
        weights += device.weights;
        QCOMPARE(device.planned, device.weights + device.cache + device.scratch);
        QCOMPARE(device.free_after, device.free_before - device.planned);
        if (plan.fits) {
          QVERIFY(device.planned <= device.usable);
          // A device left out may have had less free than its reserve to begin with.
          QVERIFY(device.free_after >= device.reserve || device.module_count == 0);
        }
      }
      if (plan.fits) {
        std::int64_t expected = 0;
        for (const ModuleCost& module : request.modules)
          expected += module.weight_bytes;
        QCOMPARE(weights, expected);
        QVERIFY(plan.largest_context);
        QVERIFY(plan.largest_context->pages >= plan.pages);
      } else if (plan.largest_context) {
        QVERIFY(plan.largest_context->pages < plan.pages);
      }
    }
  }
};

QUIRE_TEST(PlannerEdgesTest)
#include "test_planner_edges.moc"
