// The multi-device path on logical CPU devices: placement across devices,
// each layer's cache pages on its device, the hidden state moving between
// them, and the same logits as one device.

#include <QTest>

#include "quire/engine/model_error.h"
#include "runtime_test_support.h"
#include "test_main.h"

using namespace quire;
using quire::test::TestModel;

class MultiDeviceTest : public QObject {
  Q_OBJECT

  std::unique_ptr<TestModel> model_;
  std::vector<cache::TokenId> tokens_;

  engine::RuntimeOptions options(engine::PlacementMode mode) const {
    engine::RuntimeOptions o;
    o.cache_tokens = 256;
    o.page_size = 32;
    o.max_chunk_tokens = 64;
    o.placement.mode = mode;
    o.reserve_bytes = 0;
    return o;
  }

 private slots:
  void initTestCase() {
    engine::modelgen::RandomModelSpec spec;
    spec.architecture = "mistral";
    spec.layers = 4;
    spec.sliding_window = 40;
    spec.seed = 8;
    model_ = std::make_unique<TestModel>(spec);
    tokens_ = test::random_tokens(100, 512, 4);
  }

  void twoDevicesGiveTheLogitsOfOne() {
    kernels::CpuBackend one;
    engine::ModelRuntime single(model_->description(), one,
                                options(engine::PlacementMode::FillInOrder));
    const std::vector<std::vector<float>> expected = single.prefill(tokens_, true);

    kernels::CpuBackend two(kernels::CpuBackend::parse_devices("cpu:2x64MiB"));
    engine::ModelRuntime split(model_->description(), two,
                               options(engine::PlacementMode::Balanced));
    const engine::LoadedModel& loaded = split.loaded();
    QCOMPARE(loaded.layers.front().device, 0);
    QCOMPARE(loaded.layers.back().device, 1);
    for (std::size_t i = 0; i < loaded.layers.size(); ++i) {
      QCOMPARE(split.storage().device(i), loaded.layers[i].device);
    }
    const cache::CacheStats stats = split.cache().stats();
    QCOMPARE(stats.devices.size(), std::size_t(2));
    QVERIFY(stats.devices[0].allocated_bytes > 0 && stats.devices[1].allocated_bytes > 0);

    const std::vector<std::vector<float>> actual = split.prefill(tokens_, true);
    QCOMPARE(actual.size(), expected.size());
    for (std::size_t row = 0; row < actual.size(); ++row)
      QCOMPARE(actual[row], expected[row]);
  }

  void aModelThatDoesNotFitIsRefusedBeforeLoading() {
    kernels::CpuBackend tiny(kernels::CpuBackend::parse_devices("cpu:2x256KiB"));
    try {
      engine::ModelRuntime runtime(model_->description(), tiny,
                                   options(engine::PlacementMode::FillInOrder));
      QFAIL("the model was loaded");
    } catch (const engine::ModelError& error) {
      QVERIFY2(std::string(error.what()).starts_with("does not fit"), error.what());
    }
    // Nothing was allocated.
    for (const kernels::DeviceInfo& device : tiny.devices())
      QCOMPARE(device.free_bytes, device.total_bytes);
  }
};

QUIRE_TEST(MultiDeviceTest)
#include "test_multi_device.moc"
