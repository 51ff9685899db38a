// Host memory in the memory panel's data: on a machine without a GPU the
// devices are the machine's memory, so the cache lives there whatever
// "Cache lives" says, counted once; the cache's host tier and Quire's own
// memory are named as what they are, not as other processes' memory.

#include <QTest>

#include "memory_snapshot.h"
#include "quire/app/app_settings.h"
#include "quire/engine/generator/generator.h"
#include "quire/engine/runtime/kv_storage.h"
#include "quire/engine/runtime/model_runtime.h"
#include "quire/kernels/cpu/cpu_backend.h"
#include "runtime_settings.h"
#include "small_model.h"
#include "test_main.h"

using namespace quire;

namespace {

engine::JobRequest host_memory_request() {
  engine::JobRequest request;
  request.prompt = test::prompt_of(100, 7);
  request.sampling = engine::SamplingSettings::greedy_settings();
  request.max_new_tokens = 8;
  request.stop_at_eos = false;
  request.label = "Host memory";
  return request;
}

qint64 parts_used(const ui::DeviceMemoryView& device) {
  return device.weights + device.cache + device.host_tier + device.scratch + device.program +
         device.other;
}

}  // namespace

class HostMemorySnapshotTest : public QObject {
  Q_OBJECT

 private slots:
  // "In host memory" on the machine's own memory: the options the settings
  // give keep the cache on the device, which is that memory, so the plan has
  // one row without a second host-memory figure and the panel's cache is the
  // pages. Devices with budgets of their own still offload.
  void anOffloadedCacheOnTheMachinesMemoryIsCountedOnce() {
    test::SmallModel model(test::qwen2_spec(5));
    ui::EngineSettings settings = app::AppSettings().engine;  // the defaults
    settings.cache_residence = QStringLiteral("offloaded");
    settings.cache_tokens = 4096;
    kernels::CpuBackend budgeted(kernels::CpuBackend::parse_devices("cpu:1GiB"));
    QVERIFY(!budgeted.devices().at(0).host_memory);
    QCOMPARE(
        gui::runtime_options(settings, *model.description, {0}, budgeted.devices()).cache_residence,
        engine::CacheResidence::Offloaded);

    kernels::CpuBackend backend;  // one device over the machine's memory
    QVERIFY(backend.devices().at(0).host_memory);
    const engine::RuntimeOptions options =
        gui::runtime_options(settings, *model.description, {0}, backend.devices());
    QCOMPARE(options.cache_residence, engine::CacheResidence::Device);
    engine::ModelRuntime runtime(model.description, backend, options);
    QVERIFY(!runtime.plan().host_cache.has_value());
    QCOMPARE(runtime.plan().devices.size(), std::size_t(1));
    QVERIFY(runtime.plan().devices[0].cache > 0);
    QCOMPARE(runtime.plan().devices[0].staging, 0);
    QVERIFY(!runtime.storage().any_on_host());

    engine::Generator generator(runtime, *model.tokenizer);
    generator.submit(host_memory_request());
    QVERIFY(generator.step());
    const ui::MemorySnapshotView snapshot = gui::memory_snapshot(runtime, generator);
    QCOMPARE(snapshot.devices.size(), qsizetype(1));
    const ui::DeviceMemoryView& device = snapshot.devices[0];
    QVERIFY(device.host);
    QCOMPARE(device.cache, runtime.cache().stats().devices.at(0).allocated_bytes);
    QVERIFY(device.cache > 0);
  }

  // Quire's resident memory beyond the model, its cache and the host tier
  // is Quire's: what is left for other processes excludes all of it.
  void quiresOwnMemoryIsNotOtherProcesses() {
    test::SmallModel model(test::qwen2_spec(5));
    kernels::CpuBackend backend;
    engine::RuntimeOptions options = test::small_options();
    options.host_pages = 8;
    engine::ModelRuntime runtime(model.description, backend, options);
    engine::Generator generator(runtime, *model.tokenizer);
    generator.submit(host_memory_request());
    QVERIFY(generator.step());
    const ui::MemorySnapshotView snapshot = gui::memory_snapshot(runtime, generator);
    QCOMPARE(snapshot.devices.size(), qsizetype(1));
    const ui::DeviceMemoryView& device = snapshot.devices[0];
    QCOMPARE(device.host_tier, runtime.storage().host_tier_bytes());
    QVERIFY(device.host_tier > 0);
    // A test process holds Qt, its libraries and its heap beyond the model.
    QVERIFY(device.program > 0);
    QCOMPARE(parts_used(device) + device.free, device.total);
  }

  // Devices with budgets of their own are not the machine's memory: the
  // host tier gets a row of its own, named host memory.
  void aHostTierBesideOtherDevicesHasItsOwnRow() {
    test::SmallModel model(test::qwen2_spec(5));
    kernels::CpuBackend backend(kernels::CpuBackend::parse_devices("cpu:512MiB"));
    engine::RuntimeOptions options = test::small_options();
    options.host_pages = 8;
    engine::ModelRuntime runtime(model.description, backend, options);
    engine::Generator generator(runtime, *model.tokenizer);
    const ui::MemorySnapshotView snapshot = gui::memory_snapshot(runtime, generator);
    QCOMPARE(snapshot.devices.size(), qsizetype(2));
    QVERIFY(!snapshot.devices[0].host);
    QCOMPARE(snapshot.devices[0].host_tier, 0);
    QCOMPARE(snapshot.devices[0].program, 0);
    const ui::DeviceMemoryView& host = snapshot.devices[1];
    QCOMPARE(host.name, QStringLiteral("Host memory"));
    QVERIFY(host.host);
    QCOMPARE(host.host_tier, runtime.storage().host_tier_bytes());
    QVERIFY(host.host_tier > 0);
  }
};

QUIRE_TEST(HostMemorySnapshotTest)
#include "test_host_memory_snapshot.moc"
