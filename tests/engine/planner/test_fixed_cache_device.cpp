// The whole KV cache fixed on one device (PlacementRequest::cache_device):
// that device pays every layer's pages and its scratch before any weight,
// the weights spread over the devices as the mode says, and a cache that
// does not fit there is refused naming the device and the numbers. Byte
// counts are checked by hand against "model A" (planner_test_helpers.h).

#include <QTest>
#include <stdexcept>

#include "planner_test_helpers.h"
#include "test_main.h"

using namespace quire::engine;
using namespace quire::engine::testing;

namespace {

// Model A at 4 pages (40 MiB of cache per layer, 160 MiB for all four) on
// A and B (964 MiB usable each) and a small C whose usable memory is
// `c_free` less the 36 MiB reserve.
PlacementRequest three_devices(std::int64_t c_free) {
  PlacementRequest request = model_a(1024);
  request.devices.push_back(device(2, "C", c_free, 1024 * MiB));
  return request;
}

}  // namespace

class FixedCacheDeviceTest : public QObject {
  Q_OBJECT

 private slots:
  void theCacheGoesToADeviceWithoutLayers() {
    PlacementRequest request = three_devices(300 * MiB);
    request.cache_device = 2;
    const PlacementPlan plan = plan_placement(request);
    QVERIFY2(plan.fits, plan.problem.c_str());
    QCOMPARE(plan.cache_slot, 2);
    // Device 0: scratch 64 + embedding 100 + four layers of 200, no cache:
    // exactly its 964 MiB; the head goes on to device 1.
    QCOMPARE(slots_of(plan), QList<int>({0, 0, 0, 0, 0, 1}));
    const DevicePlacement& a = plan.devices[0];
    QCOMPARE(a.weights, 900 * MiB);
    QCOMPARE(a.cache, std::int64_t{0});
    QCOMPARE(a.scratch, 64 * MiB);
    QCOMPARE(a.planned, 964 * MiB);
    const DevicePlacement& b = plan.devices[1];
    QCOMPARE(b.weights, 150 * MiB);
    QCOMPARE(b.cache, std::int64_t{0});
    QCOMPARE(b.scratch, 114 * MiB);
    QCOMPARE(b.planned, 264 * MiB);
    const DevicePlacement& c = plan.devices[2];
    QVERIFY(c.fixed_cache && c.used());
    QCOMPARE(c.module_count, 0);
    QCOMPARE(c.weights, std::int64_t{0});
    QCOMPARE(c.cache, 160 * MiB);
    QCOMPARE(c.scratch, 64 * MiB);
    QCOMPARE(c.planned, 224 * MiB);
    QCOMPARE(c.free_after, 76 * MiB);
    QVERIFY(!a.fixed_cache && !b.fixed_cache);
    // A layer's pages are still its own, wherever they live.
    QCOMPARE(plan.modules[1].cache_bytes, 40 * MiB);

    const std::string text = describe_plan(plan);
    QVERIFY2(text.find("  KV cache on device 2 (fixed): every attention layer's pages, 160 MiB") !=
                 std::string::npos,
             text.c_str());
    QVERIFY2(
        text.find("device 2 (C): KV cache only — weights 0 B, cache 160 MiB") != std::string::npos,
        text.c_str());
    // Nothing said about C being too small for a module: it holds the cache.
    QVERIFY2(text.find("not used") == std::string::npos, text.c_str());
  }

  void theCacheDeviceMayHoldLayersToo() {
    PlacementRequest request = model_a(1024);
    request.cache_device = 1;
    const PlacementPlan plan = plan_placement(request);
    QVERIFY2(plan.fits, plan.problem.c_str());
    // Without the cache the layers all fit device 0; device 1 holds the
    // head, the cache and one scratch.
    QCOMPARE(slots_of(plan), QList<int>({0, 0, 0, 0, 0, 1}));
    QCOMPARE(plan.devices[0].planned, 964 * MiB);
    const DevicePlacement& b = plan.devices[1];
    QCOMPARE(b.weights, 150 * MiB);
    QCOMPARE(b.cache, 160 * MiB);
    QCOMPARE(b.scratch, 114 * MiB);
    QCOMPARE(b.planned, 424 * MiB);
    const std::string text = describe_plan(plan);
    QVERIFY2(text.find("device 1 (B): head, KV cache — ") != std::string::npos, text.c_str());

    // The default placement keeps each layer's pages beside it.
    request.cache_device.reset();
    const PlacementPlan spread = plan_placement(request);
    QCOMPARE(spread.cache_slot, -1);
    QCOMPARE(slots_of(spread), QList<int>({0, 0, 0, 0, 1, 1}));
    QCOMPARE(spread.devices[0].cache, 120 * MiB);
    QCOMPARE(spread.devices[1].cache, 40 * MiB);
  }

  void balancedSpreadsTheWeightsAroundTheCache() {
    PlacementRequest request = three_devices(300 * MiB);
    request.cache_device = 2;
    request.policy.mode = PlacementMode::Balanced;
    const PlacementPlan plan = plan_placement(request);
    QVERIFY2(plan.fits, plan.problem.c_str());
    QCOMPARE(plan.devices[2].cache, 160 * MiB);
    QCOMPARE(plan.devices[2].planned, 224 * MiB);
    QCOMPARE(plan.devices[0].cache + plan.devices[1].cache, std::int64_t{0});
    QCOMPARE(plan.devices[0].weights + plan.devices[1].weights, 1050 * MiB);
    // Both weight devices take a share, the fullest as empty as it can be.
    QVERIFY(plan.devices[0].module_count > 0 && plan.devices[1].module_count > 0);
    QVERIFY(std::max(plan.devices[0].planned, plan.devices[1].planned) < 964 * MiB);
  }

  void aCacheDeviceTooSmallIsRefusedWithItsNumbers() {
    PlacementRequest request = three_devices(200 * MiB);
    request.cache_device = 2;
    const PlacementPlan plan = plan_placement(request);
    QVERIFY(!plan.fits);
    QVERIFY(plan.shortfall.has_value());
    QCOMPARE(plan.shortfall->kind, Shortfall::Kind::CacheDevice);
    QCOMPARE(plan.shortfall->slot, 2);
    QCOMPARE(plan.shortfall->needed, 224 * MiB);
    QCOMPARE(plan.shortfall->usable, 164 * MiB);
    // 40 MiB a page plus 64 of scratch in 164 MiB: two pages.
    QVERIFY(plan.largest_context.has_value());
    QCOMPARE(plan.largest_context->pages, std::int64_t{2});
    QCOMPARE(
        plan.problem,
        std::string("does not fit: the KV cache fixed on device 2 (C) needs 224 MiB there with "
                    "its scratch, and it has 164 MiB free after the 36 MiB reserve — lower "
                    "the context to 512 tokens, use a smaller cache format, or fix the cache "
                    "on a device with more room"));
    QVERIFY(fits_with(request, 512));
    QVERIFY(!fits_with(request, 513));
  }

  void offloadedLayersShareOneRingOnTheCacheDevice() {
    PlacementRequest request = model_a(1024);
    for (ModuleCost& module : request.modules) {
      if (module.kind == ModuleKind::Layer) module.cache_in_host_memory = true;
    }
    request.cache_residence = CacheResidence::Offloaded;
    request.cache_device = 1;
    const PlacementPlan plan = plan_placement(request);
    QVERIFY2(plan.fits, plan.problem.c_str());
    QCOMPARE(plan.devices[0].staging, std::int64_t{0});
    QCOMPARE(plan.devices[0].cache, std::int64_t{0});
    // Two slots of one layer's 40 MiB.
    QCOMPARE(plan.devices[1].staging, 80 * MiB);
    QCOMPARE(plan.devices[1].cache, std::int64_t{0});
    QCOMPARE(plan.devices[1].planned, (80 + 150 + 114) * MiB);
    QVERIFY(plan.host_cache.has_value());
    QCOMPARE(plan.host_cache->bytes, 160 * MiB);
  }

  void aCacheDeviceOutsideTheDevicesIsAnError() {
    PlacementRequest request = model_a(1024);
    request.cache_device = 2;
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, plan_placement(request));
    request.cache_device = -1;
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, plan_placement(request));
  }
};

QUIRE_TEST(FixedCacheDeviceTest)
#include "test_fixed_cache_device.moc"
