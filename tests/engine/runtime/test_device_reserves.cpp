// Reserves chosen per device: each device keeps its own headroom, and the
// plan places the model around it.

#include <QTest>
#include <stdexcept>

#include "quire/engine/runtime/device_reserves.h"
#include "runtime_test_support.h"
#include "test_main.h"

using namespace quire;
using quire::test::TestModel;

namespace {

constexpr std::int64_t kMiB = engine::kMiB;

std::vector<kernels::DeviceInfo> two_devices() {
  kernels::DeviceInfo a;
  a.index = 0;
  a.recommended_reserve_bytes = 7 * kMiB;
  kernels::DeviceInfo b = a;
  b.index = 1;
  b.recommended_reserve_bytes = 9 * kMiB;
  return {a, b};
}

}  // namespace

class DeviceReservesTest : public QObject {
  Q_OBJECT

  std::unique_ptr<TestModel> model_;

  engine::PlacementPlan plan(const engine::DeviceReserves& reserves) {
    kernels::CpuBackend backend(kernels::CpuBackend::parse_devices("cpu:2x64MiB"));
    engine::RuntimeOptions options;
    options.cache_tokens = 256;
    options.page_size = 32;
    options.max_chunk_tokens = 64;
    options.reserve_bytes = reserves;
    return engine::plan_placement(
        engine::placement_request(*model_->description(), backend.devices(), options));
  }

 private slots:
  void initTestCase() {
    engine::modelgen::RandomModelSpec spec;
    spec.layers = 4;
    model_ = std::make_unique<TestModel>(spec);
  }

  void noFigureTakesTheBackendsAdvice() {
    engine::PlacementPolicy policy;
    engine::apply_reserves({}, two_devices(), policy);
    QCOMPARE(policy.reserve_for(0), 7 * kMiB);
    QCOMPARE(policy.reserve_for(1), 9 * kMiB);
  }

  void oneFigureIsKeptOnEveryDevice() {
    engine::PlacementPolicy policy;
    engine::apply_reserves(3 * kMiB, two_devices(), policy);
    QCOMPARE(policy.reserve_for(0), 3 * kMiB);
    QCOMPARE(policy.reserve_for(1), 3 * kMiB);
  }

  void perDeviceFiguresGoByPosition() {
    engine::PlacementPolicy policy;
    engine::apply_reserves(std::vector<std::int64_t>{1 * kMiB, 2 * kMiB}, two_devices(), policy);
    QCOMPARE(policy.reserve_for(0), 1 * kMiB);
    QCOMPARE(policy.reserve_for(1), 2 * kMiB);
  }

  void aCountThatDisagreesIsRefused() {
    engine::PlacementPolicy policy;
    try {
      engine::apply_reserves(std::vector<std::int64_t>{1, 2, 3}, two_devices(), policy);
      QFAIL("three reserves for two devices were accepted");
    } catch (const std::invalid_argument& error) {
      QCOMPARE(std::string(error.what()),
               std::string("reserves are given for 3 devices but 2 devices are selected; give "
                           "one reserve for every device, or one per selected device"));
    }
  }

  void theVerdictFollowsEachDevicesReserve() {
    // A device that keeps all its memory free holds nothing; the model goes
    // to the one that does not.
    const engine::PlacementPlan first_kept = plan(std::vector<std::int64_t>{64 * kMiB, 0});
    QVERIFY2(first_kept.fits, first_kept.problem.c_str());
    QCOMPARE(first_kept.devices[0].reserve, 64 * kMiB);
    QCOMPARE(first_kept.devices[1].reserve, std::int64_t{0});
    QCOMPARE(first_kept.devices[0].module_count, 0);
    QCOMPARE(first_kept.devices[1].module_count, static_cast<int>(first_kept.modules.size()));

    const engine::PlacementPlan second_kept = plan(std::vector<std::int64_t>{0, 64 * kMiB});
    QVERIFY2(second_kept.fits, second_kept.problem.c_str());
    QCOMPARE(second_kept.devices[0].module_count, static_cast<int>(second_kept.modules.size()));
    QCOMPARE(second_kept.devices[1].module_count, 0);

    const engine::PlacementPlan both_kept = plan(64 * kMiB);
    QVERIFY(!both_kept.fits);
  }
};

QUIRE_TEST(DeviceReservesTest)
#include "test_device_reserves.moc"
