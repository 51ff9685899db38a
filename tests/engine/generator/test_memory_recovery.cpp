// The generator when a step runs out of device memory: every place a step can
// fail, once or for a while, leaves every greedy reply exactly as it is
// without faults and the cache without a page astray; a shortage that lasts
// ends only the reply that cannot fit even alone.

#include <QTest>
#include <random>

#include "quire/engine/generator/generator.h"
#include "quire/engine/modelgen/random_model_spec.h"
#include "quire/engine/runtime/model_runtime.h"
#include "quire/kernels/cpu/cpu_backend.h"
#include "quire/kernels/fault_injecting_backend.h"
#include "small_model.h"
#include "test_main.h"

using namespace quire;
using namespace quire::engine;
using kernels::BackendCall;
using kernels::FaultPlan;
using kernels::FaultRule;
using quire::test::SmallModel;

Q_DECLARE_METATYPE(cache::CacheFormat)
Q_DECLARE_METATYPE(kernels::BackendCall)
Q_DECLARE_METATYPE(quire::engine::GeneratorConfig::Logits)

namespace {

// The suite's narrow model (64 wide, one KV head) with `layers` layers.
modelgen::RandomModelSpec recovery_spec(int layers) {
  modelgen::RandomModelSpec spec;
  spec.layers = layers;
  spec.hidden = 64;
  spec.heads = 2;
  spec.kv_heads = 1;
  spec.intermediate = 96;
  spec.seed = 61;
  return spec;
}

const SmallModel& model() {
  static const SmallModel shared(recovery_spec(2));
  return shared;
}

// Layers enough that moving the cache to host memory frees more of the
// device than its staging ring (two layers' pages) takes.
const SmallModel& deep_model() {
  static const SmallModel shared(recovery_spec(6));
  return shared;
}

std::vector<cache::TokenId> prompt_of(int count, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<cache::TokenId> tokens{1};
  for (int i = 1; i < count; ++i)
    tokens.push_back(static_cast<cache::TokenId>(3 + rng() % 400));
  return tokens;
}

struct JobSpec {
  std::vector<cache::TokenId> prompt;
  int max_new = 0;
  int submit_at_step = 0;
};

// Four replies that overlap: two from the start (one prefilling over several
// steps), two joining while the first decode. Two share a prefix of whole
// pages, so a page is shared and a cached one revived.
std::vector<JobSpec> overlapping_jobs() {
  std::vector<cache::TokenId> shared = prompt_of(24, 7);
  std::vector<cache::TokenId> second = shared;
  for (const cache::TokenId token : prompt_of(12, 8))
    second.push_back(token);
  return {{shared, 9, 0}, {prompt_of(45, 9), 7, 0}, {second, 8, 2}, {prompt_of(11, 10), 10, 4}};
}

struct Outcome {
  std::vector<JobResult> results;
  MemoryRecoveries recoveries;
  std::int64_t faults = 0;
  std::int64_t calls = 0;  // of the call the test counts
  std::int64_t row_fetches = 0;
  cache::CacheStats stats;
  std::vector<std::string> problems;  // the cache's invariants
};

struct Setup {
  cache::CacheFormat format = cache::CacheFormat::FP16;
  int pages = 40;
  int max_batch = 4;
  const SmallModel* model = nullptr;  // model() unless set
  // From this step on, another program holds all but `leave_free` bytes of
  // the device (a budgeted one, so that freeing memory gives it back).
  int shrink_at_step = -1;
  std::int64_t leave_free = 0;
  int host_pages = 0;  // of the host tier
  bool defragment = true;
  GeneratorConfig::Logits logits = GeneratorConfig::Logits::Automatic;
  // Sampling that leaves the candidates undecided, so that rows are fetched
  // (seeded per reply); greedy otherwise.
  bool fetch_rows = false;
  // Greedy replies that draft by prompt lookup (speculative decoding).
  bool draft = false;
};

Outcome run_jobs(const std::vector<JobSpec>& jobs, const FaultPlan& plan, BackendCall counted,
                 const Setup& setup = {}) {
  const SmallModel& used = setup.model != nullptr ? *setup.model : model();
  std::vector<kernels::CpuBackend::Device> devices;
  if (setup.shrink_at_step >= 0) devices.push_back({"budgeted", std::int64_t{256} << 20});
  kernels::FaultInjectingBackend backend(std::make_unique<kernels::CpuBackend>(devices));
  RuntimeOptions options;
  options.cache_format = setup.format;
  options.page_size = 8;
  options.cache_tokens = std::int64_t{setup.pages} * options.page_size;
  options.max_chunk_tokens = 32;
  options.max_sequences = 17;
  options.reserve_bytes = 0;
  options.host_pages = setup.host_pages;
  ModelRuntime runtime(used.description, backend, options);
  GeneratorConfig config;
  config.max_batch_size = setup.max_batch;
  config.max_step_tokens = 32;
  config.defragment_when_idle = setup.defragment;
  config.logits = setup.logits;
  Generator generator(runtime, *used.tokenizer, config);
  kernels::DeviceBuffer taken_by_another_program;
  // Faults count from here: loading is not what is tested.
  backend.reset_counters();
  backend.set_plan(plan);

  Outcome outcome;
  outcome.results.resize(jobs.size());
  std::size_t submitted = 0;
  for (int step = 0; submitted < jobs.size() || !generator.idle(); ++step) {
    for (std::size_t j = 0; j < jobs.size(); ++j) {
      if (jobs[j].submit_at_step != step) continue;
      JobRequest request;
      request.prompt = jobs[j].prompt;
      request.sampling = SamplingSettings::greedy_settings();
      if (setup.fetch_rows) {
        request.sampling = SamplingSettings{};
        request.sampling.temperature = 1.5f;
        request.sampling.top_k = 0;
        request.sampling.top_p = 1;
        request.sampling.seed = 1000 + j;
      }
      request.max_new_tokens = jobs[j].max_new;
      request.stop_at_eos = false;
      if (setup.draft) request.draft.method = engine::DraftSettings::Method::Ngram;
      request.on_done = [&outcome, j](const JobResult& done) { outcome.results[j] = done; };
      generator.submit(std::move(request));
      ++submitted;
    }
    if (step == setup.shrink_at_step) {
      const std::int64_t free = backend.devices().front().free_bytes;
      taken_by_another_program = backend.inner().allocate(
          0, static_cast<std::size_t>(free - setup.leave_free), "another program");
    }
    generator.step();
  }
  outcome.recoveries = generator.memory_recoveries();
  outcome.row_fetches = generator.sampling_counters().row_fetches;
  outcome.faults = backend.faults();
  outcome.calls = backend.calls(counted);
  outcome.stats = runtime.cache().stats();
  outcome.problems = runtime.cache().check_invariants();
  return outcome;
}

// Replies over a cache of 12 pages and a host tier of 16: a chat's pages are
// shared and a prefix ending inside a page is copied, then longer prompts
// evict them to host memory, and the chats' next turns restore them.
std::vector<JobSpec> evicting_jobs() {
  const std::vector<cache::TokenId> first = prompt_of(30, 31);
  std::vector<cache::TokenId> sibling(first.begin(), first.begin() + 20);
  for (const cache::TokenId token : prompt_of(10, 32))
    sibling.push_back(token);
  std::vector<cache::TokenId> next_turn = first;
  for (const cache::TokenId token : prompt_of(5, 33))
    next_turn.push_back(token);
  std::vector<cache::TokenId> sibling_turn = sibling;
  for (const cache::TokenId token : prompt_of(3, 34))
    sibling_turn.push_back(token);
  return {{first, 4, 0},
          {sibling, 4, 3},
          {prompt_of(60, 35), 4, 8},
          {prompt_of(36, 36), 3, 9},
          {next_turn, 4, 18},
          {sibling_turn, 3, 19}};
}

QString describe(const JobResult& result) {
  return QStringLiteral("stop %1, %2 tokens, error \"%3\"")
      .arg(int(result.stop_reason))
      .arg(result.tokens.size())
      .arg(QString::fromStdString(result.error));
}

// The cache holds no reference and accounts for every page.
void verify_cache(const Outcome& outcome, const QString& where) {
  QVERIFY2(outcome.problems.empty(),
           qPrintable(where + ": " +
                      QString::fromStdString(outcome.problems.empty() ? std::string()
                                                                      : outcome.problems.front())));
  QVERIFY2(outcome.stats.referenced_pages == 0, qPrintable(where));
  QCOMPARE(outcome.stats.free_pages + outcome.stats.cached_pages, outcome.stats.total_pages);
  QCOMPARE(outcome.stats.sequences, 0);
}

}  // namespace

class MemoryRecoveryTest : public QObject {
  Q_OBJECT

 private slots:
  void faultsAtEveryCallKeepEveryReply_data() {
    QTest::addColumn<BackendCall>("call");
    QTest::addColumn<int>("length");  // calls that fail in a row
    QTest::addColumn<cache::CacheFormat>("format");
    QTest::addColumn<int>("stride");  // every stride-th call is tried
    QTest::addColumn<int>("pages");   // of the cache
    QTest::addColumn<bool>("draft");  // speculative decoding
    const auto row = [](const char* name, BackendCall call, int length, cache::CacheFormat format,
                        int stride, int pages = 40, bool draft = false) {
      QTest::newRow(name) << call << length << format << stride << pages << draft;
    };
    using cache::CacheFormat;
    row("allocate", BackendCall::Allocate, 1, CacheFormat::FP16, 1);
    row("linear", BackendCall::Linear, 1, CacheFormat::FP16, 1);
    row("linear_many", BackendCall::LinearMany, 1, CacheFormat::FP16, 1);
    row("rms_norm", BackendCall::RmsNorm, 1, CacheFormat::FP16, 1);
    row("embedding", BackendCall::Embedding, 1, CacheFormat::FP16, 1);
    row("write_kv", BackendCall::WriteKv, 1, CacheFormat::FP16, 1);
    for (const CacheFormat format : cache::all_cache_formats()) {
      const std::string name = "paged_attention " + std::string(cache::format_info(format).name);
      QTest::newRow(name.c_str()) << BackendCall::PagedAttention << 1 << format << 1 << 40 << false;
    }
    // Three failures in a row: the retry fails too, so the batch halves,
    // and halves again, before the step runs.
    row("linear x3", BackendCall::Linear, 3, CacheFormat::FP16, 1);
    row("write_kv x3 FP8", BackendCall::WriteKv, 3, CacheFormat::FP8, 1);
    row("write_kv x3 Q4", BackendCall::WriteKv, 3, CacheFormat::Q4, 1);
    row("rope x2 Q6", BackendCall::Rope, 2, CacheFormat::Q6, 1);
    // A cache too small for every reply at once: pages are evicted for a
    // step that then fails, and the replies sent back find them again.
    row("linear x3 small cache", BackendCall::Linear, 3, CacheFormat::FP16, 1, 18);
    row("write_kv x2 small cache", BackendCall::WriteKv, 2, CacheFormat::FP16, 1, 18);
    // Steps that verify drafts: as single-token sequences (FP16) and as one
    // chunk (a coded cache).
    row("linear x3 drafts", BackendCall::Linear, 3, CacheFormat::FP16, 1, 40, true);
    row("write_kv x2 drafts small cache", BackendCall::WriteKv, 2, CacheFormat::FP16, 1, 18, true);
    row("write_kv x3 drafts Q4", BackendCall::WriteKv, 3, CacheFormat::Q4, 1, 40, true);
  }

  void faultsAtEveryCallKeepEveryReply() {
    QFETCH(BackendCall, call);
    QFETCH(int, length);
    QFETCH(cache::CacheFormat, format);
    QFETCH(int, stride);
    QFETCH(int, pages);
    QFETCH(bool, draft);
    const std::vector<JobSpec> jobs = overlapping_jobs();
    Setup setup;
    setup.format = format;
    setup.pages = pages;
    setup.draft = draft;
    const Outcome clean = run_jobs(jobs, {}, call, setup);
    QCOMPARE(clean.recoveries.steps, std::int64_t{0});
    QVERIFY(clean.calls > 0);
    std::int64_t accepted = 0;
    for (const JobResult& result : clean.results) {
      QCOMPARE(result.stop_reason, StopReason::MaxNewTokens);
      accepted += result.statistics.accepted_tokens;
    }
    QCOMPARE(accepted > 0, draft);

    int shrunk = 0;
    for (std::int64_t first = 1; first <= clean.calls; first += stride) {
      FaultPlan plan;
      plan.rules.push_back(FaultRule{call, first, length});
      const Outcome faulty = run_jobs(jobs, plan, call, setup);
      const QString where = QStringLiteral("fault at call %1").arg(first);
      QVERIFY2(faulty.faults >= 1, qPrintable(where));
      QCOMPARE(faulty.recoveries.steps, std::int64_t{1});
      QVERIFY2(!faulty.recoveries.last.empty(), qPrintable(where));
      // One failure is always overcome by running the step again. A run of
      // them may hit a step of one job, which then fails alone and ends.
      if (length == 1) QCOMPARE(faulty.recoveries.ended_jobs, std::int64_t{0});
      std::int64_t ended = 0;
      for (std::size_t j = 0; j < jobs.size(); ++j) {
        const JobResult& result = faulty.results[j];
        const QString job = where + ", job " + QString::number(j) + ": " + describe(result);
        if (result.stop_reason == StopReason::Error &&
            result.error.find("ran out of memory for this reply") != std::string::npos) {
          ++ended;
          continue;
        }
        QVERIFY2(result.stop_reason == StopReason::MaxNewTokens, qPrintable(job));
        QVERIFY2(result.tokens == clean.results[j].tokens, qPrintable(job + ": other tokens"));
      }
      QCOMPARE(ended, faulty.recoveries.ended_jobs);
      verify_cache(faulty, where);
      if (ended == 0 && faulty.recoveries.last_action == MemoryRecoveries::Action::RanFewer) {
        ++shrunk;
      }
    }
    // Longer runs of failures made the generator run fewer jobs at once,
    // and every reply still finished.
    if (length > 1) QVERIFY(shrunk > 0);
  }

  void faultsInCacheStorageKeepEveryReply_data() {
    QTest::addColumn<BackendCall>("call");
    QTest::addColumn<GeneratorConfig::Logits>("logits");
    QTest::newRow("copy") << BackendCall::Copy << GeneratorConfig::Logits::Automatic;
    // Rows the candidates leave undecided are fetched with a copy.
    QTest::newRow("copy, fetched rows") << BackendCall::Copy << GeneratorConfig::Logits::Candidates;
    QTest::newRow("save_page") << BackendCall::SavePage << GeneratorConfig::Logits::Automatic;
    QTest::newRow("restore_page") << BackendCall::RestorePage << GeneratorConfig::Logits::Automatic;
    QTest::newRow("copy_page_tokens")
        << BackendCall::CopyPageTokens << GeneratorConfig::Logits::Automatic;
  }

  // Saves to the host tier, restores from it and partial-page copies that
  // fail: an admission is undone and runs again, a lost save only costs the
  // page, and no page comes back with bytes that were half written.
  void faultsInCacheStorageKeepEveryReply() {
    QFETCH(BackendCall, call);
    QFETCH(GeneratorConfig::Logits, logits);
    const std::vector<JobSpec> jobs = evicting_jobs();
    Setup setup;
    setup.pages = 12;
    setup.host_pages = 16;
    setup.max_batch = 2;
    setup.logits = logits;
    setup.fetch_rows = logits == GeneratorConfig::Logits::Candidates;
    const Outcome clean = run_jobs(jobs, {}, call, setup);
    QVERIFY(clean.calls > 0);
    if (setup.fetch_rows) QVERIFY(clean.row_fetches > 0);
    QVERIFY(clean.stats.host_saves > 0);
    QVERIFY(clean.stats.host_restores > 0);
    QVERIFY(clean.stats.copied_tokens > 0);
    // Pages were moved while idle too, so faults land in those moves as well.
    QVERIFY(clean.stats.defragmentations > 0);
    QCOMPARE(clean.recoveries.failed_defragmentations, std::int64_t{0});
    for (const JobResult& result : clean.results)
      QCOMPARE(result.stop_reason, StopReason::MaxNewTokens);
    verify_cache(clean, QStringLiteral("without faults"));
    std::int64_t failed_moves = 0;

    for (std::int64_t first = 1; first <= clean.calls; ++first) {
      FaultPlan plan;
      plan.rules.push_back(FaultRule{call, first, 1});
      const Outcome faulty = run_jobs(jobs, plan, call, setup);
      const QString where = QStringLiteral("fault at call %1").arg(first);
      QVERIFY2(faulty.faults == 1, qPrintable(where));
      for (std::size_t j = 0; j < jobs.size(); ++j) {
        const JobResult& result = faulty.results[j];
        const QString job = where + ", job " + QString::number(j) + ": " + describe(result);
        QVERIFY2(result.stop_reason == StopReason::MaxNewTokens, qPrintable(job));
        QVERIFY2(result.tokens == clean.results[j].tokens, qPrintable(job + ": other tokens"));
      }
      QCOMPARE(faulty.recoveries.ended_jobs, std::int64_t{0});
      verify_cache(faulty, where);
      failed_moves += faulty.recoveries.failed_defragmentations;
    }
    // Copies within a page (not a host save or restore) move pages while idle.
    if (call == BackendCall::CopyPageTokens) QVERIFY(failed_moves > 0);
  }

  // Two copies in a row fail: where they are a row's fetch and its retry,
  // only that reply ends, saying why; every other reply is as without faults.
  void aRowThatCannotBeFetchedEndsOnlyItsReply() {
    const std::vector<JobSpec> jobs = evicting_jobs();
    Setup setup;
    setup.pages = 12;
    setup.host_pages = 16;
    setup.max_batch = 2;
    setup.defragment = false;
    setup.logits = GeneratorConfig::Logits::Candidates;
    setup.fetch_rows = true;
    const Outcome clean = run_jobs(jobs, {}, BackendCall::Copy, setup);
    int rows_lost = 0;
    for (std::int64_t first = 1; first <= clean.calls; ++first) {
      FaultPlan plan;
      plan.rules.push_back(FaultRule{BackendCall::Copy, first, 2});
      const Outcome faulty = run_jobs(jobs, plan, BackendCall::Copy, setup);
      const QString where = QStringLiteral("faults at calls %1 and %2").arg(first).arg(first + 1);
      std::int64_t ended = 0;
      for (std::size_t j = 0; j < jobs.size(); ++j) {
        const JobResult& result = faulty.results[j];
        const QString job = where + ", job " + QString::number(j) + ": " + describe(result);
        if (result.stop_reason == StopReason::Error) {
          QVERIFY2(result.error.find("ran out of memory for this reply") != std::string::npos,
                   qPrintable(job));
          ++ended;
          if (result.error.find("logits") != std::string::npos) ++rows_lost;
          continue;
        }
        QVERIFY2(result.stop_reason == StopReason::MaxNewTokens, qPrintable(job));
        QVERIFY2(result.tokens == clean.results[j].tokens, qPrintable(job + ": other tokens"));
      }
      QVERIFY2(ended <= 1, qPrintable(where));
      QCOMPARE(ended, faulty.recoveries.ended_jobs);
      verify_cache(faulty, where);
    }
    QVERIFY(rows_lost > 0);
  }

  // Memory that stays short for larger allocations: the reply whose page
  // table needs one ends, with the device and the numbers in its reason;
  // the others are what they are without the shortage.
  void lastingShortageEndsOnlyTheReplyThatCannotFit() {
    std::vector<JobSpec> jobs = overlapping_jobs();
    // 139 pages: the page tables of a step outgrow the first allocation
    // (17 sequences of 8 pages), and this one's are 17 x 256 pages.
    jobs.push_back({prompt_of(1100, 11), 5, 1});
    Setup setup;
    setup.pages = 200;
    const Outcome clean = run_jobs(jobs, {}, BackendCall::Allocate, setup);
    QCOMPARE(clean.results.back().stop_reason, StopReason::MaxNewTokens);

    FaultPlan plan;
    plan.allocations_above = 4096;
    const Outcome short_of_memory = run_jobs(jobs, plan, BackendCall::Allocate, setup);
    const JobResult& ended = short_of_memory.results.back();
    QCOMPARE(ended.stop_reason, StopReason::Error);
    QVERIFY2(ended.error.find("ran out of memory for this reply even with no other reply") !=
                     std::string::npos &&
                 ended.error.find("device 0") != std::string::npos &&
                 ended.error.find("page tables") != std::string::npos,
             ended.error.c_str());
    for (std::size_t j = 0; j + 1 < jobs.size(); ++j) {
      QVERIFY2(short_of_memory.results[j].stop_reason == StopReason::MaxNewTokens,
               qPrintable(describe(short_of_memory.results[j])));
      QCOMPARE(short_of_memory.results[j].tokens, clean.results[j].tokens);
    }
    const MemoryRecoveries& recoveries = short_of_memory.recoveries;
    QCOMPARE(recoveries.ended_jobs, std::int64_t{1});
    QVERIFY(recoveries.steps >= 1);
    QCOMPARE(recoveries.device, 0);
    QVERIFY(!recoveries.device_name.empty());
    verify_cache(short_of_memory, QStringLiteral("after the shortage"));
  }

  // Another program takes the device's memory for good, and a long reply's
  // page tables no longer fit even with the reply running alone: the cache
  // moves to host memory and every reply finishes with the tokens it has
  // without the shortage.
  void aLastingShortageIsSurvivedByOffloadingTheCache() {
    std::vector<JobSpec> jobs = overlapping_jobs();
    jobs.push_back({prompt_of(1100, 11), 5, 1});
    Setup setup;
    setup.pages = 200;
    setup.model = &deep_model();
    const Outcome clean = run_jobs(jobs, {}, BackendCall::Allocate, setup);
    for (const JobResult& result : clean.results)
      QCOMPARE(result.stop_reason, StopReason::MaxNewTokens);
    QVERIFY(!clean.recoveries.cache_offloaded);

    setup.shrink_at_step = 1;
    setup.leave_free = 4096;
    const Outcome shrunk = run_jobs(jobs, {}, BackendCall::Allocate, setup);
    for (std::size_t j = 0; j < jobs.size(); ++j) {
      QVERIFY2(shrunk.results[j].stop_reason == StopReason::MaxNewTokens,
               qPrintable(describe(shrunk.results[j])));
      QCOMPARE(shrunk.results[j].tokens, clean.results[j].tokens);
    }
    const MemoryRecoveries& recoveries = shrunk.recoveries;
    QVERIFY(recoveries.cache_offloaded);
    QCOMPARE(recoveries.ended_jobs, std::int64_t{0});
    QVERIFY(recoveries.steps >= 1);
    QCOMPARE(recoveries.last_action, MemoryRecoveries::Action::OffloadedCache);
    QVERIFY2(recoveries.last.find("the cache moved to host memory and replies continue, slower") !=
                 std::string::npos,
             recoveries.last.c_str());
    verify_cache(shrunk, QStringLiteral("after offloading"));
  }

  // Where the staging ring would take as much of the device as the pages
  // free (two layers, two slots), the cache stays where it is.
  void offloadingThatFreesNothingIsNotTried() {
    std::vector<JobSpec> jobs = overlapping_jobs();
    jobs.push_back({prompt_of(1100, 11), 5, 1});
    Setup setup;
    setup.pages = 200;
    setup.shrink_at_step = 1;
    setup.leave_free = 4096;
    const Outcome shrunk = run_jobs(jobs, {}, BackendCall::Allocate, setup);
    QVERIFY(!shrunk.recoveries.cache_offloaded);
    QCOMPARE(shrunk.recoveries.ended_jobs, std::int64_t{1});
    QCOMPARE(shrunk.results.back().stop_reason, StopReason::Error);
    verify_cache(shrunk, QStringLiteral("without offloading"));
  }

  // After a shortage that passes, the batch grows back to its configured size.
  void theBatchGrowsBackAfterAShortage() {
    std::vector<JobSpec> jobs;
    for (int j = 0; j < 4; ++j)
      jobs.push_back({prompt_of(6 + j, 20 + std::uint32_t(j)), 90, 0});
    FaultPlan plan;
    plan.rules.push_back(FaultRule{BackendCall::Linear, 12, 3});
    kernels::FaultInjectingBackend backend(std::make_unique<kernels::CpuBackend>());
    RuntimeOptions options;
    options.page_size = 8;
    options.cache_tokens = 64 * 8;
    options.max_chunk_tokens = 32;
    options.max_sequences = 17;
    options.reserve_bytes = 0;
    ModelRuntime runtime(model().description, backend, options);
    GeneratorConfig config;
    config.max_batch_size = 4;
    Generator generator(runtime, *model().tokenizer, config);
    backend.reset_counters();
    backend.set_plan(plan);
    for (const JobSpec& job : jobs) {
      JobRequest request;
      request.prompt = job.prompt;
      request.sampling = SamplingSettings::greedy_settings();
      request.max_new_tokens = job.max_new;
      request.stop_at_eos = false;
      generator.submit(std::move(request));
    }
    std::size_t fewest = 4;
    while (generator.step()) {
      if (generator.memory_recoveries().steps > 0) {
        fewest = std::min(fewest, generator.running());
      }
    }
    QCOMPARE(generator.memory_recoveries().last_action, MemoryRecoveries::Action::RanFewer);
    QCOMPARE(fewest, std::size_t(1));
    QCOMPARE(generator.batch_limit(), 4);
  }
};

QUIRE_TEST(MemoryRecoveryTest)
#include "test_memory_recovery.moc"
