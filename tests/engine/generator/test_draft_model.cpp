// Speculative decoding with a draft model on small random models that share
// a tokenizer: greedy replies are token for token those without drafting,
// alone and in a batch, with the draft model's cache reused by later turns;
// a model drafting for itself keeps its drafts; a draft model with another
// tokenizer is refused by name.

#include <QTest>
#include <stdexcept>
#include <string>
#include <vector>

#include "quire/engine/generator/draft_model.h"
#include "quire/engine/generator/generator.h"
#include "quire/engine/model_error.h"
#include "quire/engine/modelgen/random_model_spec.h"
#include "quire/engine/runtime/model_runtime.h"
#include "quire/kernels/cpu/cpu_backend.h"
#include "small_model.h"
#include "speculative_test_support.h"
#include "test_main.h"

using namespace quire;
using engine::DraftModel;
using engine::DraftSettings;
using engine::Generator;
using engine::JobRequest;
using engine::JobResult;
using engine::ModelRuntime;
using test::prompt_of;
using test::qwen2_spec;
using test::small_options;
using test::SmallModel;

namespace {

using Tokens = std::vector<cache::TokenId>;

JobRequest greedy_request(Tokens prompt, int max_new, bool draft) {
  JobRequest request;
  request.prompt = std::move(prompt);
  request.sampling = engine::SamplingSettings::greedy_settings();
  request.sampling.repetition_penalty = 1.3f;  // a reply that does not loop at once
  request.sampling.penalty_range = 16;
  request.max_new_tokens = max_new;
  request.stop_at_eos = false;
  if (draft) {
    request.draft.method = DraftSettings::Method::Model;
    request.draft.max_tokens = 4;
  }
  return request;
}

std::vector<JobResult> run_jobs(Generator& generator, std::vector<JobRequest> requests) {
  std::vector<JobResult> results(requests.size());
  for (std::size_t i = 0; i < requests.size(); ++i) {
    requests[i].on_done = [&results, i](const JobResult& done) { results[i] = done; };
    generator.submit(std::move(requests[i]));
  }
  generator.run_until_idle();
  return results;
}

// A draft for `target`: another random model of the same family, with the
// target's tokenizer files.
engine::modelgen::RandomModelSpec draft_spec(const SmallModel& target, std::uint64_t seed,
                                             int layers) {
  engine::modelgen::RandomModelSpec spec = qwen2_spec(seed);
  spec.layers = layers;
  spec.hidden = 64;
  spec.heads = 2;
  spec.kv_heads = 1;
  spec.intermediate = 128;
  spec.tokenizer_from = target.path;
  return spec;
}

std::vector<Tokens> draft_test_prompts() {
  std::vector<Tokens> all;
  for (std::uint32_t seed = 1; seed <= 6; ++seed)
    all.push_back(prompt_of(12 + int(seed) * 5, seed));
  return all;
}

}  // namespace

class DraftModelTest : public QObject {
  Q_OBJECT

 private slots:
  void greedyRepliesAreThoseWithoutDrafts() {
    const SmallModel target(qwen2_spec(81));
    const SmallModel draft(draft_spec(target, 82, 1));
    kernels::CpuBackend backend;
    std::vector<JobResult> expected;
    for (const Tokens& prompt : draft_test_prompts()) {
      ModelRuntime runtime(target.description, backend, small_options());
      Generator generator(runtime, *target.tokenizer);
      expected.push_back(run_jobs(generator, {greedy_request(prompt, 32, false)}).front());
    }
    // Alone, then all at once; the draft model keeps its cache throughout.
    ModelRuntime draft_runtime(draft.description, backend, small_options());
    DraftModel drafter(draft_runtime, target.tokenizer->vocab_size());
    std::int64_t drafted = 0;
    for (std::size_t i = 0; i < expected.size(); ++i) {
      ModelRuntime runtime(target.description, backend, small_options());
      Generator generator(runtime, *target.tokenizer);
      generator.set_draft_model(&drafter);
      const JobResult result =
          run_jobs(generator, {greedy_request(draft_test_prompts()[i], 32, true)}).front();
      QCOMPARE(result.tokens, expected[i].tokens);
      QCOMPARE(result.text, expected[i].text);
      QVERIFY(result.statistics.accepted_tokens <= result.statistics.drafted_tokens);
      drafted += result.statistics.drafted_tokens;
    }
    QVERIFY(drafted > 0);
    ModelRuntime runtime(target.description, backend, small_options());
    Generator generator(runtime, *target.tokenizer);
    generator.set_draft_model(&drafter);
    std::vector<JobRequest> batch;
    for (const Tokens& prompt : draft_test_prompts())
      batch.push_back(greedy_request(prompt, 32, true));
    batch.back().draft = {};  // one job that does not draft rides along
    const std::vector<JobResult> together = run_jobs(generator, std::move(batch));
    for (std::size_t i = 0; i < expected.size(); ++i)
      QCOMPARE(together[i].tokens, expected[i].tokens);
    QVERIFY(runtime.cache().check_invariants().empty());
    QVERIFY(draft_runtime.cache().check_invariants().empty());
    // Every drafting job's sequence in the draft cache ended with it.
    QVERIFY(draft_runtime.cache().sequences().empty());
  }

  // The target's replies stay its own over every kind of cache and model:
  // coded caches (verified as one chunk), a sliding window, experts. The
  // draft is a small dense model with the target's tokenizer, caching in the
  // target's coding.
  void otherCachesAndFamiliesGiveTheSameReplies_data() {
    QTest::addColumn<QString>("architecture");
    QTest::addColumn<int>("window");
    QTest::addColumn<cache::CacheFormat>("format");
    QTest::newRow("q8 cache") << "qwen2" << 0 << cache::CacheFormat::Q8;
    QTest::newRow("fp8 cache") << "qwen2" << 0 << cache::CacheFormat::FP8;
    QTest::newRow("q6 cache") << "qwen2" << 0 << cache::CacheFormat::Q6;
    QTest::newRow("sliding window") << "mistral" << 24 << cache::CacheFormat::FP16;
    QTest::newRow("mixture of experts") << "mixtral" << 0 << cache::CacheFormat::FP16;
  }

  void otherCachesAndFamiliesGiveTheSameReplies() {
    QFETCH(QString, architecture);
    QFETCH(int, window);
    QFETCH(cache::CacheFormat, format);
    engine::modelgen::RandomModelSpec spec =
        engine::modelgen::default_spec(architecture.toStdString());
    spec.seed = 95;
    if (window > 0) spec.sliding_window = window;
    const SmallModel target(spec);
    const SmallModel draft(draft_spec(target, 96, 1));
    kernels::CpuBackend backend;
    ModelRuntime draft_runtime(draft.description, backend, small_options(format));
    DraftModel drafter(draft_runtime, target.tokenizer->vocab_size());
    std::int64_t drafted = 0;
    for (const Tokens& prompt : draft_test_prompts()) {
      ModelRuntime plain_runtime(target.description, backend, small_options(format));
      Generator plain(plain_runtime, *target.tokenizer);
      const JobResult expected = run_jobs(plain, {greedy_request(prompt, 32, false)}).front();
      ModelRuntime runtime(target.description, backend, small_options(format));
      Generator generator(runtime, *target.tokenizer);
      generator.set_draft_model(&drafter);
      const JobResult result = run_jobs(generator, {greedy_request(prompt, 32, true)}).front();
      QCOMPARE(result.tokens, expected.tokens);
      drafted += result.statistics.drafted_tokens;
      QVERIFY(runtime.cache().check_invariants().empty());
    }
    QVERIFY(drafted > 0);
    QVERIFY(draft_runtime.cache().check_invariants().empty());
  }

  // The same weights drafting for themselves choose what the model chooses:
  // every draft is kept (each reply needs about a fifth of the steps).
  void aModelDraftingForItselfKeepsItsDrafts() {
    const SmallModel target(qwen2_spec(83));
    kernels::CpuBackend backend;
    ModelRuntime draft_runtime(target.description, backend, small_options());
    DraftModel drafter(draft_runtime, target.tokenizer->vocab_size());
    ModelRuntime runtime(target.description, backend, small_options());
    Generator plain_generator(runtime, *target.tokenizer);
    const JobResult plain =
        run_jobs(plain_generator, {greedy_request(prompt_of(40, 9), 41, false)}).front();
    Generator generator(runtime, *target.tokenizer);
    generator.set_draft_model(&drafter);
    const JobResult result =
        run_jobs(generator, {greedy_request(prompt_of(40, 9), 41, true)}).front();
    QCOMPARE(result.tokens, plain.tokens);
    QCOMPARE(result.statistics.accepted_tokens, result.statistics.drafted_tokens);
    // 40 tokens after the first, four drafts and the model's own a step.
    QCOMPARE(result.statistics.draft_steps, std::int64_t(8));
    QCOMPARE(result.statistics.drafted_tokens, std::int64_t(32));
  }

  // Sampled: the draft model draws with the job's settings and hands over
  // the distribution it drew from, so a model drafting for itself has its
  // drafts kept (min(1, p/q) is 1 where p = q). Were q ignored, each draft
  // would stand only with its probability p(d), next to never here.
  void aSampledModelDraftingForItselfKeepsItsDrafts() {
    const SmallModel target(qwen2_spec(94));
    kernels::CpuBackend backend;
    ModelRuntime draft_runtime(target.description, backend, small_options());
    DraftModel drafter(draft_runtime, target.tokenizer->vocab_size());
    ModelRuntime runtime(target.description, backend, small_options());
    Generator generator(runtime, *target.tokenizer);
    generator.set_draft_model(&drafter);
    std::vector<JobResult> replies;
    for (int round = 0; round < 2; ++round) {
      JobRequest request = greedy_request(prompt_of(30, 12), 40, true);
      request.sampling = engine::SamplingSettings{};
      // The random model's rows are sharp; this hot, they spread over
      // hundreds of tokens.
      request.sampling.temperature = 20.0f;
      request.sampling.top_k = 0;
      request.sampling.top_p = 1.0f;
      request.sampling.seed = 5;
      replies.push_back(run_jobs(generator, {std::move(request)}).front());
    }
    QCOMPARE(replies[1].tokens, replies[0].tokens);  // reproducible from the seed
    const engine::JobStatistics& stats = replies[0].statistics;
    QCOMPARE(stats.generated_tokens, std::int64_t(40));
    QVERIFY(stats.drafted_tokens >= 24);
    QVERIFY2(stats.accepted_tokens * 10 >= stats.drafted_tokens * 9,
             (std::to_string(stats.accepted_tokens) + " of " + std::to_string(stats.drafted_tokens))
                 .c_str());
  }

  // A second turn finds the first turn's pages in the draft cache too.
  void laterTurnsReuseTheDraftCache() {
    const SmallModel target(qwen2_spec(84));
    const SmallModel draft(draft_spec(target, 85, 1));
    kernels::CpuBackend backend;
    ModelRuntime draft_runtime(draft.description, backend, small_options());
    DraftModel drafter(draft_runtime, target.tokenizer->vocab_size());
    ModelRuntime runtime(target.description, backend, small_options());
    Generator generator(runtime, *target.tokenizer);
    generator.set_draft_model(&drafter);
    const Tokens first_prompt = prompt_of(70, 4);
    const JobResult first = run_jobs(generator, {greedy_request(first_prompt, 20, true)}).front();
    const std::int64_t reused_before = draft_runtime.cache().stats().reused_tokens;
    Tokens second_prompt = first_prompt;
    second_prompt.insert(second_prompt.end(), first.tokens.begin(), first.tokens.end());
    const Tokens question = prompt_of(8, 5);
    second_prompt.insert(second_prompt.end(), question.begin() + 1, question.end());
    run_jobs(generator, {greedy_request(second_prompt, 20, true)});
    // The first turn's full pages (five of 16 tokens at least: the draft
    // computed all but the reply's last tokens) were found by hash.
    const std::int64_t reused = draft_runtime.cache().stats().reused_tokens - reused_before;
    QVERIFY2(reused >= 80, std::to_string(reused).c_str());
  }

  void aDraftCacheWithoutRoomDraftsLess() {
    const SmallModel target(qwen2_spec(86));
    const SmallModel draft(draft_spec(target, 87, 1));
    kernels::CpuBackend backend;
    // Two pages of 16 tokens: no prompt of these fits.
    ModelRuntime draft_runtime(draft.description, backend,
                               small_options(cache::CacheFormat::FP16, 2, 16));
    DraftModel drafter(draft_runtime, target.tokenizer->vocab_size());
    ModelRuntime runtime(target.description, backend, small_options());
    Generator plain_generator(runtime, *target.tokenizer);
    const JobResult plain =
        run_jobs(plain_generator, {greedy_request(prompt_of(50, 3), 16, false)}).front();
    Generator generator(runtime, *target.tokenizer);
    generator.set_draft_model(&drafter);
    const JobResult result =
        run_jobs(generator, {greedy_request(prompt_of(50, 3), 16, true)}).front();
    QCOMPARE(result.tokens, plain.tokens);
    QCOMPARE(result.statistics.drafted_tokens, std::int64_t(0));
    QVERIFY(draft_runtime.cache().check_invariants().empty());
  }

  void anotherTokenizerIsRefusedByName() {
    const SmallModel target(qwen2_spec(88));
    engine::modelgen::RandomModelSpec other = qwen2_spec(89);
    other.vocab = 384;  // trained on its own, with fewer pieces
    const SmallModel foreign(other);
    kernels::CpuBackend backend;
    ModelRuntime runtime(target.description, backend, small_options());
    try {
      engine::LoadedDraftModel refused(foreign.path, runtime, *target.tokenizer, backend);
      QFAIL("a draft with another tokenizer was accepted");
    } catch (const engine::ModelError& error) {
      const std::string expected = "the draft model " + foreign.path.string() +
                                   " has 384 tokens, " + "the model " + target.path.string() +
                                   " has 512";
      QVERIFY2(std::string(error.what()).starts_with(expected), error.what());
      QVERIFY(std::string(error.what()).find("the model's own tokenizer") != std::string::npos);
    }
    // The same number of tokens, one spelled otherwise.
    const SmallModel sibling(draft_spec(target, 90, 1));
    engine::check_draft_tokenizer(*target.tokenizer, *sibling.tokenizer, "target", "draft");
    try {
      engine::check_draft_tokenizer(*target.tokenizer, *foreign.tokenizer, "target", "draft");
      QFAIL("tokenizers of different sizes were taken for the same");
    } catch (const engine::ModelError&) {
    }
    // Its own tokenizer files pass, and the draft loads beside the model.
    engine::LoadedDraftModel loaded(sibling.path, runtime, *target.tokenizer, backend);
    QCOMPARE(loaded.runtime().cache().num_pages(), runtime.cache().num_pages());
    Generator generator(runtime, *target.tokenizer);
    generator.set_draft_model(&loaded.drafter());
    const JobResult result =
        run_jobs(generator, {greedy_request(prompt_of(20, 2), 12, true)}).front();
    QVERIFY(result.statistics.drafted_tokens > 0);
  }

  // Planned against what the model left free, before any weight is read.
  void aDraftThatDoesNotFitIsRefusedBeforeLoading() {
    const SmallModel target(qwen2_spec(92));
    const SmallModel draft(draft_spec(target, 93, 1));
    kernels::CpuBackend roomy;
    const ModelRuntime measured(target.description, roomy, small_options());
    const engine::DevicePlacement& used = measured.plan().devices.front();
    // Room for the model and 96 KiB more (the draft needs several times that).
    kernels::CpuBackend backend({kernels::CpuBackend::Device{
        "small", used.weights + used.scratch + used.cache + (std::int64_t{96} << 10)}});
    ModelRuntime runtime(target.description, backend, small_options());
    try {
      ModelRuntime draft_runtime(draft.description, backend,
                                 engine::draft_runtime_options(runtime));
      QFAIL("the draft model fitted beside the model");
    } catch (const engine::ModelError& error) {
      QVERIFY2(std::string(error.what()).starts_with("does not fit"), error.what());
    }
    // Beside the model on a roomy device it runs with the model's cache shape.
    ModelRuntime draft_runtime(draft.description, roomy, engine::draft_runtime_options(measured));
    QCOMPARE(draft_runtime.cache().num_pages(), measured.cache().num_pages());
    QCOMPARE(draft_runtime.cache().page_size(), measured.cache().page_size());
  }

  void aRequestForADraftModelNeedsOne() {
    const SmallModel target(qwen2_spec(91));
    kernels::CpuBackend backend;
    ModelRuntime runtime(target.description, backend, small_options());
    Generator generator(runtime, *target.tokenizer);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             generator.submit(greedy_request(prompt_of(8, 1), 4, true)));
    QVERIFY(generator.idle());
  }
};

QUIRE_TEST(DraftModelTest)
#include "test_draft_model.moc"
