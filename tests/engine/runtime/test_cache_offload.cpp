// KV pages in host memory (CacheResidence::Offloaded and
// OffloadGlobalLayers), streamed through a staging ring on a logical CPU
// device too small for the whole cache: the same logits, bit for bit, as the
// cache on the device, over prefill, decode steps, a second turn that reuses
// cached pages (one of them back from the host tier), and a
// defragmentation; and the plan that prices it.

#include <QTest>
#include <algorithm>

#include "conversation.h"
#include "quire/engine/model_error.h"
#include "quire/kernels/fault_injecting_backend.h"
#include "runtime_test_support.h"
#include "test_main.h"

using namespace quire;
using quire::test::TestModel;

Q_DECLARE_METATYPE(kernels::BackendCall)

namespace {

constexpr int kPageSize = 32;

engine::RuntimeOptions options(engine::CacheResidence residence) {
  engine::RuntimeOptions o;
  o.cache_tokens = 8 * kPageSize;
  o.page_size = kPageSize;
  o.max_chunk_tokens = 64;
  o.host_pages = 16;
  o.reserve_bytes = 0;
  o.cache_residence = residence;
  o.step_graphs = false;
  return o;
}

// Two turns of two conversations, as far as the host tier (no
// defragmentation: what a failed pass leaves is the point).
std::vector<std::vector<float>> two_conversations(engine::ModelRuntime& runtime,
                                                  const test::PassRunner& run = {}) {
  std::vector<std::vector<float>> logits;
  std::vector<cache::TokenId> first = test::random_tokens(100, 512, 11);
  first = test::converse_turn(runtime, first, 4, logits, run);
  test::converse_turn(runtime, test::random_tokens(70, 512, 12), 3, logits, run);
  for (cache::TokenId t : test::random_tokens(20, 512, 13))
    first.push_back(t);
  test::converse_turn(runtime, first, 3, logits, run);
  return logits;
}

// Pass `failing` (counted from 0) fails at the `rule`th call, as a device
// that ran short would make it; the cache then moves to host memory and the
// pass runs again, as the generator does.
struct FailThenOffload {
  engine::ModelRuntime& runtime;
  kernels::FaultInjectingBackend& backend;
  int failing = 0;
  kernels::FaultRule rule;
  int passes = 0;
  int failures = 0;

  engine::ForwardPass::Result operator()(cache::SequenceId sequence,
                                         const engine::ForwardPass::Sequence& step) {
    if (passes++ == failing) {
      backend.reset_counters();
      backend.set_plan(kernels::FaultPlan{{rule}, {}});
      try {
        runtime.forward().run(std::span(&step, 1));
      } catch (const kernels::DeviceOutOfMemory&) {
        ++failures;
      }
      backend.set_plan({});
      const auto end = step.first_position + static_cast<std::int32_t>(step.tokens.size());
      runtime.cache().mark_overwritten(sequence, step.first_position, end);
      runtime.offload_cache();
    }
    return runtime.forward().run(std::span(&step, 1));
  }
};

// A single CPU device with room for what `plan` puts on its device besides
// the cache, `cache_bytes` of cache, and `slack` for what a run allocates
// beyond the plan (page tables).
kernels::CpuBackend budgeted(const engine::PlacementPlan& plan, std::int64_t cache_bytes,
                             std::int64_t slack = std::int64_t{1} << 20) {
  const engine::DevicePlacement& device = plan.devices.front();
  const std::int64_t budget = device.weights + device.scratch + cache_bytes + slack;
  return kernels::CpuBackend({kernels::CpuBackend::Device{"small", budget}});
}

}  // namespace

class CacheOffloadTest : public QObject {
  Q_OBJECT

  std::unique_ptr<TestModel> llama_;
  std::unique_ptr<TestModel> gemma_;

 private slots:
  void initTestCase() {
    engine::modelgen::RandomModelSpec spec;
    spec.layers = 6;
    // Pages large enough that the slack of budgeted() is less than a layer's.
    spec.kv_heads = 4;
    spec.head_dim = 128;
    spec.seed = 21;
    llama_ = std::make_unique<TestModel>(spec);
    engine::modelgen::RandomModelSpec gemma;
    gemma.architecture = "gemma2";
    gemma.layers = 4;
    gemma.sliding_window = 40;
    gemma.seed = 22;
    gemma_ = std::make_unique<TestModel>(gemma);
  }

  void offloadedGivesTheLogitsOfTheDeviceCache() {
    kernels::CpuBackend large;
    engine::ModelRuntime reference(llama_->description(), large,
                                   options(engine::CacheResidence::Device));
    const test::Conversation expected = test::converse(reference);
    QVERIFY(expected.defragmented);
    QVERIFY(expected.stats.host_saves > 0);
    QVERIFY(expected.stats.host_restores > 0);
    QVERIFY(expected.stats.copied_tokens > 0 || expected.stats.reused_tokens > 0);

    const engine::PlacementPlan& full = reference.plan();
    const std::int64_t layer_cache = full.devices.front().cache / 6;
    // Room for the ring (two layers' pages), not for the cache.
    kernels::CpuBackend small = budgeted(full, 2 * layer_cache);
    try {
      engine::ModelRuntime refused(llama_->description(), small,
                                   options(engine::CacheResidence::Device));
      QFAIL("the whole cache fitted the small device");
    } catch (const engine::ModelError& error) {
      QVERIFY2(std::string(error.what()).starts_with("does not fit"), error.what());
    }

    engine::ModelRuntime offloaded(llama_->description(), small,
                                   options(engine::CacheResidence::Offloaded));
    QCOMPARE(offloaded.storage().staging_bytes(), 2 * layer_cache);
    QCOMPARE(offloaded.storage().host_layer_bytes(), full.devices.front().cache);
    for (std::size_t i = 0; i < 6; ++i)
      QCOMPARE(offloaded.storage().home(i), engine::PageHome::Host);
    test::compare_logits(test::converse(offloaded), expected);
    // A decode step copies only the pages it reads and the one it writes.
    QVERIFY(offloaded.storage().step_copy_bytes() > 0);
    QVERIFY(offloaded.storage().step_copy_bytes() < full.devices.front().cache);
  }

  void offloadingGlobalLayersKeepsWindowedOnesOnTheDevice() {
    kernels::CpuBackend large;
    engine::ModelRuntime reference(gemma_->description(), large,
                                   options(engine::CacheResidence::Device));
    const test::Conversation expected = test::converse(reference);

    // Offloaded: the global layers' pages go to the host; the sliding layers'
    // window pool is small and read every step, so it stays on the device.
    engine::ModelRuntime both(gemma_->description(), large,
                              options(engine::CacheResidence::Offloaded));
    for (std::size_t i = 0; i < both.storage().layers(); ++i) {
      QCOMPARE(both.storage().home(i),
               both.storage().windowed(i) ? engine::PageHome::Device : engine::PageHome::Host);
    }
    test::compare_logits(test::converse(both), expected);

    engine::ModelRuntime global(gemma_->description(), large,
                                options(engine::CacheResidence::OffloadGlobalLayers));
    const std::vector<int>& windows = gemma_->description()->config.sliding_windows;
    int on_host = 0;
    for (std::size_t i = 0; i < windows.size(); ++i) {
      QCOMPARE(global.storage().home(i),
               windows[i] > 0 ? engine::PageHome::Device : engine::PageHome::Host);
      on_host += windows[i] > 0 ? 0 : 1;
    }
    QVERIFY(on_host > 0 && on_host < static_cast<int>(windows.size()));
    test::compare_logits(test::converse(global), expected);
  }

  void aRunningCacheMovesToHostMemory() {
    kernels::CpuBackend large;
    engine::ModelRuntime reference(llama_->description(), large,
                                   options(engine::CacheResidence::Device));
    const test::Conversation expected = test::converse(reference);

    kernels::CpuBackend backend;
    engine::ModelRuntime runtime(llama_->description(), backend,
                                 options(engine::CacheResidence::Device));
    std::vector<std::vector<float>> logits;
    std::vector<cache::TokenId> first = test::random_tokens(100, 512, 11);
    test::converse_turn(runtime, first, 6, logits);
    runtime.offload_cache();
    for (std::size_t i = 0; i < 6; ++i)
      QCOMPARE(runtime.storage().home(i), engine::PageHome::Host);
    QVERIFY(runtime.cache().stats().devices.empty());
    // The rest of the conversation, on the moved pages, as on the device.
    test::Conversation rest;
    rest.logits = logits;
    test::converse_turn(runtime, test::random_tokens(200, 512, 12), 3, rest.logits);
    QVERIFY(rest.logits.size() <= expected.logits.size());
    for (std::size_t i = 0; i < rest.logits.size(); ++i)
      QVERIFY2(rest.logits[i] == expected.logits[i], qPrintable(QString("row %1").arg(i)));
  }

  // A pass that fails midway, at each attention and projection of each
  // layer in turn, and the cache moved to host memory before it runs again:
  // every later pass gives the logits of a run on the device without faults.
  // With global layers already on the host, the failed pass leaves their
  // ring partly fetched; a mixed model's windowed layers keep their window
  // pool on the device (KvStorage::windowed).
  void offloadingAfterAFailedPassKeepsTheLogits_data() {
    QTest::addColumn<bool>("gemma");
    QTest::addColumn<int>("residence");
    QTest::addColumn<kernels::BackendCall>("call");
    QTest::addColumn<int>("failing");  // the pass that fails
    const auto rows = [](const char* name, bool gemma, engine::CacheResidence residence) {
      for (const kernels::BackendCall call :
           {kernels::BackendCall::WriteKv, kernels::BackendCall::PagedAttention,
            kernels::BackendCall::Linear}) {
        // A prefill chunk, and a decode step of a turn that reuses pages.
        for (const int failing : {1, 13}) {
          const std::string row = std::string(name) + " " +
                                  std::string(kernels::backend_call_name(call)) + " pass " +
                                  std::to_string(failing);
          QTest::newRow(row.c_str()) << gemma << static_cast<int>(residence) << call << failing;
        }
      }
    };
    rows("llama device", false, engine::CacheResidence::Device);
    rows("gemma global layers offloaded", true, engine::CacheResidence::OffloadGlobalLayers);
  }

  void offloadingAfterAFailedPassKeepsTheLogits() {
    QFETCH(bool, gemma);
    QFETCH(int, residence);
    QFETCH(kernels::BackendCall, call);
    QFETCH(int, failing);
    const TestModel& model = gemma ? *gemma_ : *llama_;
    kernels::CpuBackend large;
    engine::ModelRuntime reference(model.description(), large,
                                   options(engine::CacheResidence::Device));
    const std::vector<std::vector<float>> expected = two_conversations(reference);

    // The calls of that kind in the failing pass, counted in a run without faults.
    kernels::FaultInjectingBackend counting(std::make_unique<kernels::CpuBackend>());
    std::int64_t calls = 0;
    {
      engine::ModelRuntime runtime(model.description(), counting,
                                   options(static_cast<engine::CacheResidence>(residence)));
      int passes = 0;
      two_conversations(runtime, [&](cache::SequenceId, const engine::ForwardPass::Sequence& step) {
        if (passes == failing) counting.reset_counters();
        const engine::ForwardPass::Result result = test::run_once(runtime, step);
        if (passes++ == failing) calls = counting.calls(call);
        return result;
      });
    }
    QVERIFY(calls >= 4);

    for (std::int64_t first = 1; first <= calls; ++first) {
      kernels::FaultInjectingBackend backend(std::make_unique<kernels::CpuBackend>());
      engine::ModelRuntime runtime(model.description(), backend,
                                   options(static_cast<engine::CacheResidence>(residence)));
      FailThenOffload fail{runtime, backend, failing, kernels::FaultRule{call, first, 1}};
      const std::vector<std::vector<float>> logits = two_conversations(runtime, std::ref(fail));
      const QString where = QStringLiteral("call %1 of %2").arg(first).arg(calls);
      QVERIFY2(fail.failures == 1, qPrintable(where));
      for (std::size_t i = 0; i < runtime.storage().layers(); ++i) {
        QCOMPARE(runtime.storage().home(i),
                 runtime.storage().windowed(i) ? engine::PageHome::Device : engine::PageHome::Host);
      }
      QCOMPARE(logits.size(), expected.size());
      for (std::size_t i = 0; i < logits.size(); ++i) {
        QVERIFY2(logits[i] == expected[i], qPrintable(where + QString(", row %1").arg(i)));
      }
      QVERIFY2(runtime.cache().check_invariants().empty(), qPrintable(where));
    }
  }

  // A device that cannot hold the staging ring when the cache moves: every
  // layer is whole in host memory all the same, the first step after the
  // shortage makes the ring, and the logits are those of the device cache.
  // (A ring that could not grow used to leave a layer in host memory that
  // the streamer did not know, and the next step failed to find it.)
  void aRingThatCannotBeMadeIsMadeByTheNextStep() {
    kernels::CpuBackend large;
    engine::ModelRuntime reference(llama_->description(), large,
                                   options(engine::CacheResidence::Device));
    const std::vector<std::vector<float>> expected = two_conversations(reference);

    // The ring's four slot planes (FP16 has no scales) are allocations 1-4.
    for (const int failing_allocation : {1, 2, 4}) {
      kernels::FaultInjectingBackend backend(std::make_unique<kernels::CpuBackend>());
      engine::ModelRuntime runtime(llama_->description(), backend,
                                   options(engine::CacheResidence::Device));
      int passes = 0;
      bool threw = false;
      bool all_on_host = false;
      std::int64_t staging_while_short = -1;
      bool step_refused = false;
      const std::vector<std::vector<float>> logits = two_conversations(
          runtime, [&](cache::SequenceId, const engine::ForwardPass::Sequence& step) {
            if (passes++ == 3) {
              // The staging allocations fail from this one on, before and
              // after the pages move; then memory comes back.
              backend.reset_counters();
              backend.set_plan(kernels::FaultPlan{
                  {kernels::FaultRule{kernels::BackendCall::Allocate, failing_allocation,
                                      kernels::FaultRule::kEveryCall}},
                  {}});
              try {
                runtime.offload_cache();
              } catch (const kernels::DeviceOutOfMemory&) {
                threw = true;
              }
              all_on_host = true;
              for (std::size_t i = 0; i < runtime.storage().layers(); ++i)
                all_on_host = all_on_host && runtime.storage().home(i) == engine::PageHome::Host;
              staging_while_short = runtime.storage().staging_bytes();
              // With the allocations still failing, a step cannot begin.
              try {
                runtime.forward().run(std::span(&step, 1));
              } catch (const kernels::DeviceOutOfMemory&) {
                step_refused = true;
              }
              backend.set_plan({});
            }
            return test::run_once(runtime, step);
          });
      QVERIFY(all_on_host);
      QCOMPARE(staging_while_short, std::int64_t{0});
      QVERIFY(step_refused);
      QVERIFY(threw);
      QCOMPARE(runtime.storage().staging_bytes(),
               2 * runtime.storage().page_bytes(0) * runtime.cache().num_pages());
      QCOMPARE(logits.size(), expected.size());
      for (std::size_t i = 0; i < logits.size(); ++i)
        QVERIFY2(logits[i] == expected[i], qPrintable(QString("row %1").arg(i)));
    }
  }

  void thePlanPricesTheRingOnTheDeviceAndThePagesOnTheHost() {
    kernels::CpuBackend large;
    const engine::ModelDescription& model = *llama_->description();
    const std::vector<kernels::DeviceInfo> devices = large.devices();
    const engine::PlacementPlan on_device = engine::plan_placement(
        engine::placement_request(model, devices, options(engine::CacheResidence::Device)));
    engine::RuntimeOptions offload = options(engine::CacheResidence::Offloaded);
    offload.host_copy_bytes_per_second = 1e9;
    engine::PlacementRequest request = engine::placement_request(model, devices, offload);
    request.host = engine::PlanHost{std::int64_t{1} << 40, engine::kGiB};
    const engine::PlacementPlan plan = engine::plan_placement(request);
    QVERIFY2(plan.fits, plan.problem.c_str());
    const engine::DevicePlacement& device = plan.devices.front();
    const std::int64_t cache = on_device.devices.front().cache;
    QCOMPARE(device.cache, std::int64_t{0});
    QCOMPARE(device.staging, cache / 6 * 2);
    QCOMPARE(device.planned, device.weights + device.staging + device.scratch);
    QVERIFY(plan.host_cache.has_value());
    QCOMPARE(plan.host_cache->bytes, cache);
    // Every page up and one page down, per layer, at 8 pages.
    QCOMPARE(plan.host_cache->copy_bytes_per_step, cache / 8 * 9);
    QCOMPARE(plan.host_cache->seconds_per_step,
             static_cast<double>(plan.host_cache->copy_bytes_per_step) / 1e9);
    const std::string text = engine::describe_plan(plan);
    QVERIFY2(text.find("host memory (offloaded to host memory): cache") != std::string::npos,
             text.c_str());
    QVERIFY2(text.find("cache staging") != std::string::npos, text.c_str());

    // A host that cannot hold the pages: refused, saying so.
    request.host = engine::PlanHost{engine::kGiB + cache / 2, engine::kGiB};
    const engine::PlacementPlan refused = engine::plan_placement(request);
    QVERIFY(!refused.fits);
    QVERIFY(refused.shortfall && refused.shortfall->kind == engine::Shortfall::Kind::HostMemory);
    QVERIFY2(
        refused.problem.starts_with("does not fit: the KV cache offloaded to host memory needs"),
        refused.problem.c_str());
    QVERIFY(refused.largest_context && refused.largest_context->pages == 4);
  }

  void aDeviceTooSmallForTheCacheFitsWithOffloading() {
    kernels::CpuBackend large;
    const engine::ModelDescription& model = *llama_->description();
    const engine::PlacementPlan full = engine::plan_placement(
        engine::placement_request(model, large.devices(), options(engine::CacheResidence::Device)));
    const std::int64_t layer_cache = full.devices.front().cache / 6;
    kernels::CpuBackend small = budgeted(full, 2 * layer_cache, 0);
    const engine::PlacementPlan without = engine::plan_placement(
        engine::placement_request(model, small.devices(), options(engine::CacheResidence::Device)));
    QVERIFY2(!without.fits, (engine::describe_plan(full) + engine::describe_plan(without)).c_str());
    const engine::PlacementPlan with = engine::plan_placement(engine::placement_request(
        model, small.devices(), options(engine::CacheResidence::Offloaded)));
    QVERIFY2(with.fits, with.problem.c_str());
    // The ring alone does not fit a device with room for one layer's pages.
    kernels::CpuBackend tiny = budgeted(full, layer_cache, 0);
    const engine::PlacementPlan ring_too_big = engine::plan_placement(engine::placement_request(
        model, tiny.devices(), options(engine::CacheResidence::Offloaded)));
    QVERIFY(!ring_too_big.fits);
  }
};

QUIRE_TEST(CacheOffloadTest)
#include "test_cache_offload.moc"
