// RuntimeOptions::cache_device on logical CPU devices: every layer's KV pages
// on one device while the layers' weights spread over others, attention run
// beside the pages; the same logits, bit for bit, as the default placement
// over prefill, decode steps, a second turn that reuses cached pages (some
// back from the host tier) and a defragmentation.

#include <QTest>

#include "conversation.h"
#include "quire/engine/model_error.h"
#include "runtime_test_support.h"
#include "test_main.h"

using namespace quire;
using quire::test::TestModel;

namespace {

constexpr int kPageSize = 32;

engine::RuntimeOptions options() {
  engine::RuntimeOptions o;
  o.cache_tokens = 8 * kPageSize;
  o.page_size = kPageSize;
  o.max_chunk_tokens = 64;
  o.host_pages = 16;
  o.reserve_bytes = 0;
  o.step_graphs = false;
  return o;
}

std::int64_t sum_weights(const std::vector<engine::ModuleCost>& modules, std::size_t count) {
  std::int64_t bytes = 0;
  for (std::size_t i = 0; i < count; ++i)
    bytes += modules[i].weight_bytes + modules[i].extra_scratch_bytes;
  return bytes;
}

}  // namespace

class FixedCacheDeviceRuntimeTest : public QObject {
  Q_OBJECT

  std::unique_ptr<TestModel> model_;
  test::Conversation expected_;

 private slots:
  void initTestCase() {
    engine::modelgen::RandomModelSpec spec;
    spec.layers = 4;
    spec.seed = 31;
    model_ = std::make_unique<TestModel>(spec);
    kernels::CpuBackend one;
    engine::ModelRuntime reference(model_->description(), one, options());
    expected_ = test::converse(reference);
    QVERIFY(expected_.defragmented);
    QVERIFY(expected_.stats.host_restores > 0);
    QVERIFY(expected_.stats.reused_tokens > 0);
  }

  // Layers 0-1 on device 0, layers 2-3 on device 1, the cache on device 2,
  // which holds no layer: manual limits that leave exactly that.
  void theCacheOnADeviceWithoutLayers() {
    kernels::CpuBackend three(kernels::CpuBackend::parse_devices("cpu:3x64MiB"));
    engine::RuntimeOptions o = options();
    o.cache_device = 2;
    const engine::PlacementRequest request =
        engine::placement_request(*model_->description(), three.devices(), o);
    const std::int64_t scratch = request.device_scratch_bytes;
    std::int64_t cache = 0;
    for (const engine::ModuleCost& module : request.modules)
      cache += module.cache_bytes_per_page * 8;
    o.placement.mode = engine::PlacementMode::Manual;
    // The embedding and two layers; the rest; the cache and its scratch.
    o.placement.manual_limit_bytes = {scratch + sum_weights(request.modules, 3),
                                      std::int64_t{64} << 20, cache + scratch};

    engine::ModelRuntime split(model_->description(), three, o);
    const engine::PlacementPlan& plan = split.plan();
    QCOMPARE(plan.cache_slot, 2);
    QCOMPARE(plan.devices[2].module_count, 0);
    QCOMPARE(plan.devices[2].cache, cache);
    QCOMPARE(plan.devices[2].planned, cache + scratch);
    const std::vector<int> layer_devices{0, 0, 1, 1};
    for (std::size_t i = 0; i < 4; ++i) {
      QCOMPARE(split.loaded().layers[i].device, layer_devices[i]);
      QCOMPARE(split.storage().device(i), 2);
      QCOMPARE(split.storage().home(i), engine::PageHome::Device);
    }
    const cache::CacheStats stats = split.cache().stats();
    QCOMPARE(stats.devices.size(), std::size_t(1));
    QCOMPARE(stats.devices[0].device, 2);
    QCOMPARE(stats.devices[0].layers, 4);
    QCOMPARE(stats.devices[0].allocated_bytes, cache);

    const test::Conversation actual = test::converse(split);
    test::compare_logits(actual, expected_);
    QCOMPARE(actual.stats.reused_tokens, expected_.stats.reused_tokens);
    QCOMPARE(actual.stats.host_restores, expected_.stats.host_restores);
  }

  void theCacheOnADeviceThatHoldsLayersToo() {
    kernels::CpuBackend two(kernels::CpuBackend::parse_devices("cpu:2x64MiB"));
    engine::RuntimeOptions o = options();
    o.placement.mode = engine::PlacementMode::Balanced;
    o.cache_device = 0;
    engine::ModelRuntime split(model_->description(), two, o);
    QCOMPARE(split.loaded().layers.front().device, 0);
    QCOMPARE(split.loaded().layers.back().device, 1);
    for (std::size_t i = 0; i < 4; ++i)
      QCOMPARE(split.storage().device(i), 0);
    QCOMPARE(split.plan().devices[1].cache, std::int64_t{0});
    test::compare_logits(test::converse(split), expected_);
  }

  // Offloaded pages with a fixed cache device: one staging ring, there.
  void offloadedPagesStreamThroughTheCacheDevice() {
    kernels::CpuBackend two(kernels::CpuBackend::parse_devices("cpu:2x64MiB"));
    engine::RuntimeOptions o = options();
    o.placement.mode = engine::PlacementMode::Balanced;
    o.cache_residence = engine::CacheResidence::Offloaded;
    o.host_copy_bytes_per_second = 1e9;
    o.cache_device = 1;
    engine::ModelRuntime split(model_->description(), two, o);
    QCOMPARE(split.loaded().layers.front().device, 0);
    const std::int64_t layer_pages = split.storage().page_bytes(0) * 8;
    for (std::size_t i = 0; i < 4; ++i) {
      QCOMPARE(split.storage().device(i), 1);
      QCOMPARE(split.storage().home(i), engine::PageHome::Host);
    }
    QCOMPARE(split.storage().staging_bytes(), 2 * layer_pages);
    QCOMPARE(split.plan().devices[1].staging, 2 * layer_pages);
    QCOMPARE(split.plan().devices[0].staging, std::int64_t{0});
    test::compare_logits(test::converse(split), expected_);
  }

  void aCacheDeviceTooSmallIsRefusedBeforeLoading() {
    engine::RuntimeOptions o = options();
    o.cache_device = 1;
    // A byte less than the cache and its scratch.
    kernels::CpuBackend roomy(kernels::CpuBackend::parse_devices("cpu:2x64MiB"));
    const engine::PlacementPlan plan = engine::plan_placement(
        engine::placement_request(*model_->description(), roomy.devices(), o));
    QVERIFY(plan.fits);
    const std::int64_t needed = plan.devices[1].planned;
    QCOMPARE(plan.devices[1].module_count, 0);
    kernels::CpuBackend two({kernels::CpuBackend::Device{"big", std::int64_t{64} << 20},
                             kernels::CpuBackend::Device{"small", needed - 1}});
    try {
      engine::ModelRuntime runtime(model_->description(), two, o);
      QFAIL("the model was loaded");
    } catch (const engine::ModelError& error) {
      QVERIFY2(std::string(error.what())
                   .starts_with("does not fit: the KV cache fixed on device 1 (small) needs "),
               error.what());
    }
    for (const kernels::DeviceInfo& device : two.devices())
      QCOMPARE(device.free_bytes, device.total_bytes);
  }
};

QUIRE_TEST(FixedCacheDeviceRuntimeTest)
#include "test_fixed_cache_device.moc"
