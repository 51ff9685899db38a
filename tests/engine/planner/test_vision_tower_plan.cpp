// The vision tower in the plan: priced in host memory after the language
// model, never part of whether the model fits.

#include <QTest>
#include <stdexcept>

#include "planner_test_helpers.h"
#include "test_main.h"

using namespace quire::engine;
using namespace quire::engine::testing;

namespace {

VisionTowerCost siglip(std::int64_t weights, std::int64_t scratch) {
  return VisionTowerCost{"SigLIP tower, Gemma 3 projector", weights, scratch};
}

// Model A (planner_test_helpers.h) on one device that is the machine's own
// memory: 3000 MiB free, 36 MiB reserve. At 1024 tokens the plan puts there
// 100 + 4 x 200 + 150 MiB of weights, 4 layers x 4 pages x 10 MiB of cache
// and 64 + 50 MiB of scratch: 1324 MiB, leaving 1676, 1640 after the reserve.
PlacementRequest model_a_on_host_memory() {
  PlacementRequest request = model_a(1024);
  PlanDevice cpu = device(0, "CPU", 3000 * MiB, 4000 * MiB);
  cpu.host_memory = true;
  request.devices = {cpu};
  return request;
}

}  // namespace

class VisionTowerPlanTest : public QObject {
  Q_OBJECT

 private slots:
  void aModelWithoutATowerPricesNothing() {
    PlacementRequest request = model_a(1024);
    request.host = PlanHost{4096 * MiB, 1024 * MiB};
    const PlacementPlan plan = plan_placement(request);
    QVERIFY(!plan.vision_tower);
    QVERIFY(describe_plan(plan).find("vision") == std::string::npos);
  }

  // Beside GPUs the tower takes host memory: 4096 MiB free less the 1024 MiB
  // reserve leaves 3072 MiB for its 800 + 300 MiB. The devices are planned
  // exactly as without it.
  void aTowerBesideGpusIsPricedInHostMemory() {
    PlacementRequest request = model_a(1024);
    request.host = PlanHost{4096 * MiB, 1024 * MiB};
    const PlacementPlan without = plan_placement(request);
    request.vision_tower = siglip(800 * MiB, 300 * MiB);
    const PlacementPlan plan = plan_placement(request);
    QVERIFY(plan.fits);
    QVERIFY(plan.vision_tower);
    const VisionTowerPlacement& tower = *plan.vision_tower;
    QCOMPARE(tower.name, std::string("SigLIP tower, Gemma 3 projector"));
    QCOMPARE(tower.weight_bytes, 800 * MiB);
    QCOMPARE(tower.scratch_bytes, 300 * MiB);
    QCOMPARE(tower.bytes, 1100 * MiB);
    QCOMPARE(tower.reserve, 1024 * MiB);
    QCOMPARE(tower.usable, 3072 * MiB);
    QVERIFY(tower.fits);
    QVERIFY(tower.problem.empty());
    for (std::size_t i = 0; i < plan.devices.size(); ++i) {
      QCOMPARE(plan.devices[i].planned, without.devices[i].planned);
      QCOMPARE(plan.devices[i].free_after, without.devices[i].free_after);
    }
    QCOMPARE(plan.largest_context->tokens, without.largest_context->tokens);
    const std::string text = describe_plan(plan);
    QCOMPARE(text.substr(text.find("  vision")),
             std::string("  vision tower (SigLIP tower, Gemma 3 projector) in host memory: "
                         "weights 800 MiB, 300 MiB to read an image; 3.00 GiB of host memory "
                         "left for it\n"));
  }

  // 1500 MiB free, 1024 reserved: 476 MiB for a tower of 1100. The model
  // still fits and loads; the plan says images will be refused, and why.
  void aTowerHostMemoryCannotHoldIsRefusedAloneWithItsReason() {
    PlacementRequest request = model_a(1024);
    request.host = PlanHost{1500 * MiB, 1024 * MiB};
    request.vision_tower = siglip(800 * MiB, 300 * MiB);
    const PlacementPlan plan = plan_placement(request);
    QVERIFY(plan.fits);
    QVERIFY(plan.problem.empty());
    const VisionTowerPlacement& tower = *plan.vision_tower;
    QVERIFY(!tower.fits);
    QCOMPARE(tower.usable, 476 * MiB);
    const std::string problem =
        "images cannot be read: the vision tower (SigLIP tower, Gemma 3 projector) needs 1100 MiB "
        "of host memory (800 MiB of weights, 300 MiB to read an image), and host memory has 476 "
        "MiB free after the 1024 MiB reserve; the model loads without it and refuses images — "
        "close programs that hold memory to read images";
    QCOMPARE(tower.problem, problem);
    const std::string text = describe_plan(plan);
    QCOMPARE(text.substr(text.find("  vision")),
             "  vision tower (SigLIP tower, Gemma 3 projector) in host memory: " + problem + "\n");
  }

  // Where a device is the machine's memory, the tower gets what the plan
  // leaves there (1640 MiB after the reserve), not the host figure.
  void onTheMachinesMemoryTheTowerTakesWhatThePlanLeaves() {
    PlacementRequest request = model_a_on_host_memory();
    request.host = PlanHost{5000 * MiB, 1024 * MiB};
    request.vision_tower = siglip(1200 * MiB, 440 * MiB);
    PlacementPlan plan = plan_placement(request);
    QVERIFY(plan.fits);
    QCOMPARE(plan.devices[0].planned, 1324 * MiB);
    QCOMPARE(plan.vision_tower->reserve, 36 * MiB);
    QCOMPARE(plan.vision_tower->usable, 1640 * MiB);
    QVERIFY(plan.vision_tower->fits);  // 1640 MiB exactly

    request.vision_tower->scratch_bytes += 1;
    plan = plan_placement(request);
    QVERIFY(plan.fits);
    QVERIFY(!plan.vision_tower->fits);
    QCOMPARE(plan.vision_tower->problem,
             std::string("images cannot be read: the vision tower (SigLIP tower, Gemma 3 "
                         "projector) needs 1641 MiB of host memory (1200 MiB of weights, 441 MiB "
                         "to read an image), and host memory has 1640 MiB free after the 36 MiB "
                         "reserve and what the plan puts there; the model loads without it and "
                         "refuses images — close programs that hold memory, or lower the context "
                         "to read images"));
  }

  // Offloaded pages are the language model's: they come first. 4 layers x
  // 4 pages x 10 MiB = 160 MiB of 3072 leave 2912.
  void offloadedPagesComeBeforeTheTower() {
    PlacementRequest request = model_a(1024);
    for (ModuleCost& module : request.modules)
      module.cache_in_host_memory = module.kind == ModuleKind::Layer;
    request.cache_residence = CacheResidence::Offloaded;
    request.host = PlanHost{4096 * MiB, 1024 * MiB};
    request.vision_tower = siglip(800 * MiB, 300 * MiB);
    const PlacementPlan plan = plan_placement(request);
    QVERIFY(plan.fits);
    QCOMPARE(plan.host_cache->bytes, 160 * MiB);
    QCOMPARE(plan.vision_tower->usable, 2912 * MiB);
    QVERIFY(plan.vision_tower->fits);
  }

  // Without host memory in the request nothing is checked: the tower's
  // bytes are stated, with no free figure.
  void withoutHostMemoryTheTowerIsStatedUnchecked() {
    PlacementRequest request = model_a(1024);
    request.vision_tower = siglip(800 * MiB, 300 * MiB);
    const PlacementPlan plan = plan_placement(request);
    QCOMPARE(plan.vision_tower->usable, std::int64_t{-1});
    QVERIFY(plan.vision_tower->fits);
    const std::string text = describe_plan(plan);
    QCOMPARE(text.substr(text.find("  vision")),
             std::string("  vision tower (SigLIP tower, Gemma 3 projector) in host memory: "
                         "weights 800 MiB, 300 MiB to read an image\n"));
  }

  void negativeTowerBytesAreRefused() {
    PlacementRequest request = model_a(1024);
    request.vision_tower = siglip(-1, 0);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, plan_placement(request));
    request.vision_tower = siglip(0, -1);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, plan_placement(request));
  }
};

QUIRE_TEST(VisionTowerPlanTest)
#include "test_vision_tower_plan.moc"
