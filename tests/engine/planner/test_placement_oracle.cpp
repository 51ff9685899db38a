#include <QTest>
#include <algorithm>
#include <optional>

#include "planner_test_helpers.h"
#include "test_main.h"

using namespace quire::engine;
using namespace quire::engine::testing;

namespace {

// Every in-order placement, tried one by one: the smallest "fullest device"
// fraction among those that fit, or nothing when none fits.
struct Oracle {
  std::vector<std::int64_t> needs;  // per module, at the request's context
  std::vector<std::int64_t> usable;
  std::int64_t scratch = 0;
  std::optional<double> best;

  void search(std::size_t device, std::size_t first, double fullest) {
    if (device == usable.size()) {
      if (first == needs.size() && (!best || fullest < *best)) best = fullest;
      return;
    }
    std::int64_t cost = 0;
    for (std::size_t end = first; end <= needs.size(); ++end) {
      if (end > first) cost += (end == first + 1 ? scratch : 0) + needs[end - 1];
      if (cost > usable[device]) break;
      const double fraction =
          cost == 0 ? 0.0 : static_cast<double>(cost) / static_cast<double>(usable[device]);
      search(device + 1, end, std::max(fullest, fraction));
    }
  }
};

double fullest_fraction(const PlacementPlan& plan) {
  double fullest = 0.0;
  for (const DevicePlacement& device : plan.devices) {
    if (device.module_count == 0) continue;
    fullest =
        std::max(fullest, static_cast<double>(device.planned) / static_cast<double>(device.usable));
  }
  return fullest;
}

std::uint64_t next(std::uint64_t& state) {
  state = state * 6364136223846793005ULL + 1442695040888963407ULL;
  return state >> 33;
}

}  // namespace

class PlacementOracleTest : public QObject {
  Q_OBJECT

 private slots:
  // In-order packing is greedy; it must fit exactly when some in-order
  // placement fits, and Balanced must reach the best fullest-device fraction
  // to within its search step of 1/2^20.
  void matchesExhaustiveSearch() {
    std::uint64_t state = 2024;
    int fitting = 0;
    for (int round = 0; round < 400; ++round) {
      PlacementRequest request;
      const int count = 1 + static_cast<int>(next(state) % 9);
      for (int i = 0; i < count; ++i) {
        request.modules.push_back(layer(i, static_cast<std::int64_t>(1 + next(state) % 500) * MiB,
                                        static_cast<std::int64_t>(next(state) % 3) * MiB));
      }
      request.device_scratch_bytes = static_cast<std::int64_t>(next(state) % 80) * MiB;
      request.context_tokens = static_cast<std::int64_t>(next(state) % 40) * 256;
      const int devices = 1 + static_cast<int>(next(state) % 3);
      for (int d = 0; d < devices; ++d) {
        request.devices.push_back(
            device(d, "D", static_cast<std::int64_t>(next(state) % 2500) * MiB + 4321));
      }
      request.policy.default_reserve_bytes = 0;

      Oracle oracle;
      oracle.scratch = request.device_scratch_bytes;
      const std::int64_t pages = pages_for_tokens(request.context_tokens, 256);
      for (const ModuleCost& module : request.modules) {
        oracle.needs.push_back(module.weight_bytes + module.cache_bytes_per_page * pages);
      }
      for (const PlanDevice& d : request.devices)
        oracle.usable.push_back(d.free_bytes);
      oracle.search(0, 0, 0.0);

      for (const PlacementMode mode : {PlacementMode::FillInOrder, PlacementMode::Balanced}) {
        request.policy.mode = mode;
        const PlacementPlan plan = plan_placement(request);
        QCOMPARE(plan.fits, oracle.best.has_value());
        if (!plan.fits || mode != PlacementMode::Balanced) continue;
        ++fitting;
        const double fullest = fullest_fraction(plan);
        QVERIFY(fullest >= *oracle.best - 1e-12);
        QVERIFY2(fullest <= *oracle.best + 1.0 / (1 << 20) + 1e-12,
                 qPrintable(QString("round %1: %2 vs best %3")
                                .arg(round)
                                .arg(fullest, 0, 'g', 12)
                                .arg(*oracle.best, 0, 'g', 12)));
      }
    }
    QVERIFY(fitting > 100);  // the random cases are not all hopeless
  }

  // A large first module sets the fullest fraction; the devices after it are
  // still balanced among themselves instead of one of them staying idle.
  void laterDevicesAreBalancedToo() {
    PlacementRequest request;
    request.modules = {embedding(600 * MiB)};
    for (int i = 0; i < 6; ++i)
      request.modules.push_back(layer(i, 100 * MiB, 0));
    request.devices = {device(0, "A", 1000 * MiB), device(1, "B", 1000 * MiB),
                       device(2, "C", 1000 * MiB)};
    request.policy.default_reserve_bytes = 0;
    request.policy.mode = PlacementMode::Balanced;
    const PlacementPlan plan = plan_placement(request);
    QVERIFY(plan.fits);
    QCOMPARE(counts_of(plan), (QList<int>{1, 3, 3}));
  }
};

QUIRE_TEST(PlacementOracleTest)
#include "test_placement_oracle.moc"
