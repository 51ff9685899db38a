// Speculative decoding with the n-gram drafter on the small random model:
// greedy replies are token for token those without drafting, alone and in
// a batch, with every stop condition, over turns that reuse cached pages,
// and pages shared between jobs keep their hashes through accepted and
// rejected drafts.

#include <QTest>
#include <algorithm>
#include <map>
#include <stdexcept>
#include <vector>

#include "quire/engine/generator/draft_length.h"
#include "quire/engine/generator/generator.h"
#include "quire/engine/modelgen/random_model_spec.h"
#include "quire/engine/runtime/model_runtime.h"
#include "quire/kernels/cpu/cpu_backend.h"
#include "small_model.h"
#include "speculative_test_support.h"
#include "test_main.h"

using namespace quire;
using engine::DraftSettings;
using engine::Generator;
using engine::JobRequest;
using engine::JobResult;
using engine::JobStatistics;
using engine::ModelRuntime;
using engine::StopReason;
using test::prompt_of;
using test::qwen2_spec;
using test::repeating_prompt;
using test::run_all;
using test::run_each;
using test::sealed_pages;
using test::small_options;
using test::SmallModel;

Q_DECLARE_METATYPE(cache::ReservationPolicy)

namespace {

using Tokens = std::vector<cache::TokenId>;

std::vector<Tokens> prompts() {
  std::vector<Tokens> all;
  for (std::uint32_t seed = 1; seed <= 4; ++seed)
    all.push_back(repeating_prompt(6 + int(seed) * 3, 3, seed));
  for (std::uint32_t seed = 11; seed <= 14; ++seed)
    all.push_back(prompt_of(10 + int(seed) * 2, seed));
  return all;
}

JobRequest greedy(Tokens prompt, int max_new, bool draft, bool penalties = false) {
  JobRequest request;
  request.prompt = std::move(prompt);
  request.sampling = engine::SamplingSettings::greedy_settings();
  if (penalties) {
    // Still greedy, but a reply that varies, so that drafts are kept and
    // given back in turn, and verification must penalize each row with
    // the drafts before it.
    request.sampling.repetition_penalty = 3.0f;
    request.sampling.frequency_penalty = 4.0f;
    request.sampling.presence_penalty = 4.0f;
    request.sampling.penalty_range = 8;
  }
  request.max_new_tokens = max_new;
  request.stop_at_eos = false;
  if (draft) {
    request.draft.method = DraftSettings::Method::Ngram;
    request.draft.max_tokens = 5;
  }
  return request;
}

void compare_replies(const JobResult& drafted, const JobResult& plain) {
  QCOMPARE(drafted.tokens, plain.tokens);
  QCOMPARE(drafted.text, plain.text);
  QCOMPARE(drafted.stop_reason, plain.stop_reason);
  QCOMPARE(drafted.stop_string, plain.stop_string);
  QCOMPARE(drafted.error, plain.error);
  QCOMPARE(drafted.statistics.generated_tokens, plain.statistics.generated_tokens);
  QCOMPARE(plain.statistics.drafted_tokens, std::int64_t(0));
  QVERIFY(drafted.statistics.accepted_tokens <= drafted.statistics.drafted_tokens);
}

// Every sealed page's bytes in every layer (coded data and scales of keys
// and values), by the page's hash: what a later turn that shares the page
// reads.
std::map<cache::PageHash, std::vector<std::uint8_t>> sealed_bytes(ModelRuntime& runtime) {
  std::map<cache::PageHash, std::vector<std::uint8_t>> pages;
  const engine::KvStorage& storage = runtime.storage();
  for (const cache::PageInfo& info : runtime.cache().pages()) {
    if (!info.hashed) continue;
    std::vector<std::uint8_t>& bytes = pages[info.hash];
    for (std::size_t layer = 0; layer < storage.layers(); ++layer) {
      const kernels::KvLayerView& view = storage.view(layer);
      const kernels::KvLayerLayout& layout = view.layout;
      const std::pair<const void*, std::int64_t> planes[] = {
          {view.planes.key_data, layout.key_data_page_bytes},
          {view.planes.key_scales, layout.key_scale_page_bytes},
          {view.planes.value_data, layout.value_data_page_bytes},
          {view.planes.value_scales, layout.value_scale_page_bytes}};
      for (const auto& [plane, page_bytes] : planes) {
        if (page_bytes == 0) continue;
        const auto* first = static_cast<const std::uint8_t*>(plane) + info.index * page_bytes;
        bytes.insert(bytes.end(), first, first + page_bytes);
      }
    }
  }
  return pages;
}

}  // namespace

class SpeculativeDecodingTest : public QObject {
  Q_OBJECT

 private slots:
  void greedyRepliesAreThoseWithoutDrafts_data() {
    QTest::addColumn<cache::CacheFormat>("format");
    QTest::addColumn<cache::ReservationPolicy>("reservation");
    QTest::addColumn<int>("page_size");
    QTest::addColumn<bool>("penalties");
    QTest::addColumn<QString>("weights");
    // Mirror slots of the residual window, and whether the pages live in
    // host memory.
    QTest::addColumn<int>("window");
    QTest::addColumn<bool>("offloaded");
    const auto reserve = cache::ReservationPolicy::ReserveOnAdmission;
    const auto on_demand = cache::ReservationPolicy::OnDemand;
    const QString fp16 = "fp16";
    const int window = engine::kDefaultResidualWindow;
    QTest::newRow("fp16") << cache::CacheFormat::FP16 << reserve << 16 << false << fp16 << window
                          << false;
    QTest::newRow("fp16 penalties")
        << cache::CacheFormat::FP16 << reserve << 16 << true << fp16 << window << false;
    QTest::newRow("fp16 small pages on demand")
        << cache::CacheFormat::FP16 << on_demand << 4 << true << fp16 << window << false;
    // Every coding: each verified row reads the mirror its own decode step
    // reads, and rejected drafts leave FP8 pages as the kept tokens' steps
    // would (ForwardPass::rewind).
    const struct {
      const char* name;
      cache::CacheFormat format;
    } codings[] = {{"q8", cache::CacheFormat::Q8},
                   {"q6", cache::CacheFormat::Q6},
                   {"q4", cache::CacheFormat::Q4},
                   {"fp8", cache::CacheFormat::FP8},
                   {"k fp8, v q4", {cache::ElementCoding::FP8, cache::ElementCoding::Q4}},
                   {"k q8, v fp8", {cache::ElementCoding::Q8, cache::ElementCoding::FP8}}};
    for (const auto& [name, format] : codings) {
      for (const bool penalties : {false, true}) {
        QTest::addRow("%s%s", name, penalties ? " penalties" : "")
            << format << reserve << 16 << penalties << fp16 << window << false;
      }
      QTest::addRow("%s, no residual window", name)
          << format << reserve << 16 << true << fp16 << 0 << false;
    }
    QTest::newRow("fp8 small pages on demand")
        << cache::CacheFormat::FP8 << on_demand << 4 << true << fp16 << window << false;
    QTest::newRow("q6 small pages on demand")
        << cache::CacheFormat::Q6 << on_demand << 4 << true << fp16 << window << false;
    // Pages in host memory: verified as a chunk; FP8 pages there are not
    // kept for a rewind, so those jobs do not draft.
    QTest::newRow("q6 offloaded") << cache::CacheFormat::Q6 << reserve << 16 << true << fp16
                                  << window << true;
    QTest::newRow("fp8 offloaded")
        << cache::CacheFormat::FP8 << reserve << 16 << true << fp16 << window << true;
    // Quantized weights, whose decode products differ from their prompt
    // products on the CPU (EXL2's and EXL3's 8-bit inputs).
    for (const char* weights : {"gptq", "exl2:4.0", "exl3:3.0"}) {
      QTest::addRow("fp16 cache, %s weights", weights)
          << cache::CacheFormat::FP16 << reserve << 16 << true << QString(weights) << window
          << false;
    }
    QTest::newRow("q6 cache, exl2:4.0 weights") << cache::CacheFormat::Q6 << reserve << 16 << true
                                                << QString("exl2:4.0") << window << false;
    QTest::newRow("fp8 cache, gptq weights")
        << cache::CacheFormat::FP8 << reserve << 16 << true << QString("gptq") << window << false;
  }

  void greedyRepliesAreThoseWithoutDrafts() {
    QFETCH(cache::CacheFormat, format);
    QFETCH(cache::ReservationPolicy, reservation);
    QFETCH(int, page_size);
    QFETCH(bool, penalties);
    QFETCH(QString, weights);
    QFETCH(int, window);
    QFETCH(bool, offloaded);
    engine::modelgen::RandomModelSpec spec = qwen2_spec(71);
    spec.format = engine::modelgen::parse_format(weights.toStdString());
    const SmallModel model(spec);
    engine::RuntimeOptions options = small_options(format, 1024 / page_size, page_size);
    options.reservation = reservation;
    options.residual_window = window;
    if (offloaded) {
      options.cache_residence = engine::CacheResidence::Offloaded;
      options.host_reserve_bytes = 0;
    }

    std::vector<JobRequest> plain, drafted;
    for (const Tokens& prompt : prompts())
      plain.push_back(greedy(prompt, 40, false, penalties));
    std::vector<JobResult> expected = run_each(model, options, plain);
    // The same prompts after a few words that hold the reply's first token
    // twice and then others: lookup proposes those others where the model
    // says its token again (drafts given back).
    std::vector<JobRequest> later;
    for (std::size_t i = 0; i < expected.size(); ++i) {
      Tokens prompt = prompt_of(6, 30 + std::uint32_t(i));
      prompt[1] = prompt[2] = expected[i].tokens.front();
      prompt.insert(prompt.end(), plain[i].prompt.begin() + 1, plain[i].prompt.end());
      later.push_back(greedy(prompt, 40, false, penalties));
    }
    for (JobResult& result : run_each(model, options, later))
      expected.push_back(std::move(result));
    for (std::vector<JobRequest>* requests : {&plain, &later}) {
      for (const JobRequest& request : *requests)
        drafted.push_back(greedy(request.prompt, 40, true, penalties));
    }

    // Alone, each on a runtime of its own.
    const std::vector<JobResult> alone = run_each(model, options, drafted);
    std::int64_t accepted = 0;
    std::int64_t rejected = 0;
    for (std::size_t i = 0; i < expected.size(); ++i) {
      compare_replies(alone[i], expected[i]);
      accepted += alone[i].statistics.accepted_tokens;
      rejected += alone[i].statistics.drafted_tokens - alone[i].statistics.accepted_tokens;
    }
    if (offloaded && format.key == cache::ElementCoding::FP8) {
      QCOMPARE(accepted + rejected, std::int64_t(0));
      return;
    }
    // Both paths were taken: drafts kept and drafts given back.
    QVERIFY(accepted > 0);
    QVERIFY(rejected > 0);

    // All at once on one generator. With the residual window, which tokens
    // a sequence reads from the FP16 mirror of its open page depends on the
    // batch (more sequences than slots: MirrorSlots), so a job in a batch
    // need not equal itself alone, drafts or not: batches are compared on
    // FP16 and on coded caches without the window.
    // Both ways of reading logits: a drafting job's rows come whole while
    // the others' may come as candidates.
    // EXL3 weights on the CPU: a job in a batch need not equal itself alone
    // either (with or without drafts), so they are compared alone only.
    if ((format != cache::CacheFormat::FP16 && window > 0) || offloaded ||
        weights.startsWith("exl3")) {
      return;
    }
    for (const auto logits : {engine::GeneratorConfig::Logits::WholeRows,
                              engine::GeneratorConfig::Logits::Candidates}) {
      kernels::CpuBackend backend;
      ModelRuntime runtime(model.description, backend, options);
      engine::GeneratorConfig config;
      config.logits = logits;
      Generator generator(runtime, *model.tokenizer, config);
      std::vector<JobRequest> batch = drafted;
      // One job that does not draft rides along.
      batch.front().draft = {};
      const std::vector<JobResult> together = run_all(generator, std::move(batch));
      for (std::size_t i = 0; i < expected.size(); ++i)
        compare_replies(together[i], expected[i]);
      QVERIFY(runtime.cache().check_invariants().empty());
    }
  }

  void stopConditionsEndWhereTheyEndWithoutDrafts() {
    const SmallModel model(qwen2_spec(72));
    const engine::RuntimeOptions options = small_options();
    const Tokens prompt = repeating_prompt(9, 3, 5);
    const JobResult free_run = run_each(model, options, {greedy(prompt, 48, true, true)}).front();
    QCOMPARE(free_run.tokens.size(), std::size_t(48));
    QVERIFY(free_run.statistics.accepted_tokens > 0);
    // A token first said late in the reply, and text from its second half.
    std::size_t late = 24;
    while (late < free_run.tokens.size() &&
           std::find(free_run.tokens.begin(), free_run.tokens.begin() + std::ptrdiff_t(late),
                     free_run.tokens[late]) != free_run.tokens.begin() + std::ptrdiff_t(late)) {
      ++late;
    }
    if (late == free_run.tokens.size()) late = 24;
    const std::string stop_text = free_run.text.substr(free_run.text.size() * 2 / 3, 4);

    std::vector<JobRequest> variants;
    for (const bool draft : {false, true}) {
      JobRequest by_token = greedy(prompt, 48, draft, true);
      by_token.stop_tokens = {free_run.tokens[late]};
      variants.push_back(std::move(by_token));
      JobRequest by_string = greedy(prompt, 48, draft, true);
      by_string.stop_strings = {stop_text};
      variants.push_back(std::move(by_string));
      // max_new_tokens short of where drafts would reach.
      variants.push_back(greedy(prompt, 13, draft, true));
      // EOS: every id of the model's EOS list ends the reply.
      JobRequest by_eos = greedy(prompt, 48, draft, true);
      by_eos.stop_at_eos = true;
      variants.push_back(std::move(by_eos));
    }
    const std::vector<JobResult> results = run_each(model, options, std::move(variants));
    const std::size_t half = results.size() / 2;
    for (std::size_t i = 0; i < half; ++i)
      compare_replies(results[half + i], results[i]);
    QCOMPARE(results[0].stop_reason, StopReason::StopToken);
    QVERIFY(results[0].tokens.size() > 8);
    QCOMPARE(results[1].stop_reason, StopReason::StopString);
    QCOMPARE(results[2].stop_reason, StopReason::MaxNewTokens);
    QCOMPARE(results[2].tokens.size(), std::size_t(13));
  }

  void laterTurnsReuseThePrefixAsWithoutDrafts() {
    const SmallModel model(qwen2_spec(73));
    kernels::CpuBackend backend;
    std::vector<std::vector<JobResult>> runs;
    for (const bool draft : {false, true}) {
      ModelRuntime runtime(model.description, backend, small_options(cache::CacheFormat::FP16, 96));
      Generator generator(runtime, *model.tokenizer);
      std::vector<JobResult> turns;
      Tokens conversation = repeating_prompt(10, 3, 9);
      for (int turn = 0; turn < 4; ++turn) {
        turns.push_back(run_all(generator, {greedy(conversation, 30, draft)}).front());
        conversation.insert(conversation.end(), turns.back().tokens.begin(),
                            turns.back().tokens.end());
        const Tokens more = prompt_of(8, 40 + std::uint32_t(turn));
        conversation.insert(conversation.end(), more.begin() + 1, more.end());
        QVERIFY(runtime.cache().check_invariants().empty());
      }
      runs.push_back(std::move(turns));
    }
    for (std::size_t turn = 0; turn < runs[0].size(); ++turn) {
      compare_replies(runs[1][turn], runs[0][turn]);
      QCOMPARE(runs[1][turn].statistics.cached_tokens, runs[0][turn].statistics.cached_tokens);
      QCOMPARE(runs[1][turn].statistics.computed_tokens, runs[0][turn].statistics.computed_tokens);
    }
    QVERIFY(runs[1].back().statistics.cached_tokens > 0);
  }

  // The mechanism behind equal replies on coded caches: drafts given back
  // leave nothing behind in the pages a reply seals (an FP8 page's scale
  // grown by a rejected draft, or its tokens encoded again at that scale,
  // would be read by every later step and turn).
  void sealedPagesHoldTheBytesOfARunWithoutDrafts_data() {
    QTest::addColumn<cache::CacheFormat>("format");
    QTest::newRow("fp8") << cache::CacheFormat::FP8;
    QTest::newRow("q6") << cache::CacheFormat::Q6;
    QTest::newRow("q8") << cache::CacheFormat::Q8;
    QTest::newRow("q4") << cache::CacheFormat::Q4;
    QTest::newRow("fp16") << cache::CacheFormat::FP16;
  }

  void sealedPagesHoldTheBytesOfARunWithoutDrafts() {
    QFETCH(cache::CacheFormat, format);
    const SmallModel model(qwen2_spec(79));
    const engine::RuntimeOptions options = small_options(format);
    kernels::CpuBackend backend;
    std::int64_t rejected = 0;
    std::size_t compared = 0;
    for (const Tokens& prompt : prompts()) {
      std::vector<std::map<cache::PageHash, std::vector<std::uint8_t>>> sealed;
      std::vector<JobResult> replies;
      for (const bool draft : {false, true}) {
        ModelRuntime runtime(model.description, backend, options);
        Generator generator(runtime, *model.tokenizer);
        replies.push_back(run_all(generator, {greedy(prompt, 48, draft, true)}).front());
        sealed.push_back(sealed_bytes(runtime));
      }
      compare_replies(replies[1], replies[0]);
      rejected += replies[1].statistics.drafted_tokens - replies[1].statistics.accepted_tokens;
      QCOMPARE(sealed[1].size(), sealed[0].size());
      for (const auto& [hash, bytes] : sealed[0]) {
        QVERIFY(sealed[1].contains(hash));
        QVERIFY(sealed[1].at(hash) == bytes);
        ++compared;
      }
    }
    QVERIFY(rejected > 0);
    QVERIFY(compared > prompts().size() * 2);
  }

  void sharedPagesKeepTheirHashes() {
    const SmallModel model(qwen2_spec(74));
    kernels::CpuBackend backend;
    ModelRuntime runtime(model.description, backend, small_options(cache::CacheFormat::FP16, 128));
    Generator generator(runtime, *model.tokenizer);
    // A first turn leaves the shared prefix sealed in the cache.
    const Tokens prefix = repeating_prompt(12, 4, 21);
    run_all(generator, {greedy(prefix, 20, true)});
    const std::map<cache::PageIndex, cache::PageHash> before = sealed_pages(runtime.cache());
    QVERIFY(before.size() >= 3);

    // Then several jobs that share it decode with drafts at once.
    std::vector<JobResult> results(4);
    for (std::uint32_t j = 0; j < 4; ++j) {
      Tokens prompt = prefix;
      const Tokens tail = prompt_of(6 + int(j), 50 + j);
      prompt.insert(prompt.end(), tail.begin() + 1, tail.end());
      JobRequest request = greedy(prompt, 36, true);
      request.on_done = [&results, j](const JobResult& done) { results[j] = done; };
      generator.submit(std::move(request));
    }
    std::int64_t steps = 0;
    while (generator.step()) {
      ++steps;
      QVERIFY(runtime.cache().check_invariants().empty());
      const std::map<cache::PageIndex, cache::PageHash> now = sealed_pages(runtime.cache());
      for (const auto& [page, hash] : before) {
        QVERIFY(now.contains(page));
        QCOMPARE(now.at(page), hash);
      }
    }
    QVERIFY(steps > 0);
    std::int64_t drafted = 0;
    for (const JobResult& result : results) {
      QCOMPARE(result.stop_reason, StopReason::MaxNewTokens);
      QVERIFY(result.statistics.cached_tokens >= std::int64_t(before.size()) * 16 - 16);
      drafted += result.statistics.drafted_tokens;
    }
    QVERIFY(drafted > 0);
  }

  void otherFamiliesGiveTheSameReplies_data() {
    QTest::addColumn<QString>("architecture");
    QTest::addColumn<int>("window");
    // Every layer slides (one pool), or some do (a window pool beside).
    QTest::newRow("mistral, sliding window") << "mistral" << 24;
    QTest::newRow("gemma2, sliding window") << "gemma2" << 24;
    // Mixtures of experts: the experts a row takes are chosen on the host.
    QTest::newRow("mixtral") << "mixtral" << 0;
    QTest::newRow("qwen3_moe") << "qwen3_moe" << 0;
  }

  void otherFamiliesGiveTheSameReplies() {
    QFETCH(QString, architecture);
    QFETCH(int, window);
    engine::modelgen::RandomModelSpec spec =
        engine::modelgen::default_spec(architecture.toStdString());
    spec.seed = 77;
    if (window > 0) spec.sliding_window = window;
    const SmallModel model(spec);
    const engine::RuntimeOptions options = small_options();
    std::vector<JobRequest> plain, drafted;
    for (const Tokens& prompt : prompts()) {
      plain.push_back(greedy(prompt, 40, false, true));
      drafted.push_back(greedy(prompt, 40, true, true));
    }
    const std::vector<JobResult> expected = run_each(model, options, plain);
    const std::vector<JobResult> alone = run_each(model, options, drafted);
    std::int64_t accepted = 0;
    for (std::size_t i = 0; i < expected.size(); ++i) {
      compare_replies(alone[i], expected[i]);
      accepted += alone[i].statistics.accepted_tokens;
    }
    QVERIFY(accepted > 0);
    kernels::CpuBackend backend;
    ModelRuntime runtime(model.description, backend, options);
    Generator generator(runtime, *model.tokenizer);
    const std::vector<JobResult> together = run_all(generator, drafted);
    for (std::size_t i = 0; i < expected.size(); ++i)
      compare_replies(together[i], expected[i]);
    QVERIFY(runtime.cache().check_invariants().empty());
  }

  // What drafting is for: the same reply in fewer forward passes where the
  // reply repeats what came before.
  void acceptedDraftsSaveSteps() {
    const SmallModel model(qwen2_spec(78));
    kernels::CpuBackend backend;
    std::vector<int> steps;
    std::vector<JobResult> results;
    for (const bool draft : {false, true}) {
      ModelRuntime runtime(model.description, backend, small_options());
      Generator generator(runtime, *model.tokenizer);
      JobRequest request = greedy(repeating_prompt(10, 3, 8), 48, draft);
      request.on_done = [&results](const JobResult& done) { results.push_back(done); };
      generator.submit(std::move(request));
      int count = 0;
      while (generator.step())
        ++count;
      steps.push_back(count);
    }
    compare_replies(results[1], results[0]);
    const JobStatistics& drafted = results[1].statistics;
    // Each step that verified drafts gave its accepted drafts and one token.
    QCOMPARE(steps[0] - steps[1], static_cast<int>(drafted.accepted_tokens));
    QVERIFY(drafted.accepted_tokens >= 24);
  }

  // A grammar's masks depend on the text accepted so far: such a job
  // ignores the draft setting.
  void jobsThatCannotDraftDecodeAsUsual() {
    const SmallModel model(qwen2_spec(75));
    const Tokens prompt = repeating_prompt(8, 3, 3);
    JobRequest constrained = greedy(prompt, 24, true);
    constrained.sampling = engine::SamplingSettings{};
    constrained.sampling.seed = 7;
    constrained.grammar = engine::grammar::compile_json_schema_text(R"({"type":"integer"})");
    JobRequest plain_constrained = constrained;
    plain_constrained.draft = {};
    const std::vector<JobResult> results =
        run_each(model, small_options(), {std::move(constrained), std::move(plain_constrained)});
    compare_replies(results[0], results[1]);
    QCOMPARE(results[0].statistics.drafted_tokens, std::int64_t(0));
    QCOMPARE(results[0].statistics.draft_steps, std::int64_t(0));
    QVERIFY(!results[0].tokens.empty());
  }

  void badDraftSettingsAreRefused() {
    const SmallModel model(qwen2_spec(76));
    kernels::CpuBackend backend;
    ModelRuntime runtime(model.description, backend, small_options());
    Generator generator(runtime, *model.tokenizer);
    JobRequest none = greedy(prompt_of(8, 1), 4, true);
    none.draft.max_tokens = 0;
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, generator.submit(std::move(none)));
    JobRequest backwards = greedy(prompt_of(8, 1), 4, true);
    backwards.draft.ngram = {2, 3};
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, generator.submit(std::move(backwards)));
    QVERIFY(generator.idle());
  }
};

// The draft length follows what the model keeps.
class DraftLengthTest : public QObject {
  Q_OBJECT

 private slots:
  void growsWhileEveryDraftIsKept() {
    engine::DraftLength length(6);
    QCOMPARE(length.next(), 6);
    length.record(6, 2);  // kept two: three next time
    QCOMPARE(length.next(), 3);
    length.record(3, 3);
    QCOMPARE(length.next(), 4);
    length.record(4, 4);
    length.record(5, 5);
    length.record(6, 6);
    QCOMPARE(length.next(), 6);  // never past the longest
    length.record(0, 0);         // a step that drafted nothing changes nothing
    QCOMPARE(length.next(), 6);
  }

  void missesPauseDraftingLongerEachTime() {
    engine::DraftLength length(4);
    // Every draft rejected: the steps that still draft, out of 1000.
    std::vector<int> drafting;
    for (int step = 1; step <= 1000; ++step) {
      const int wanted = length.next();
      if (wanted == 0) continue;
      drafting.push_back(step);
      length.record(wanted, 0);
    }
    const std::vector<int> doubling{1, 2, 4, 8, 16, 32, 64, 128};
    QCOMPARE(std::vector<int>(drafting.begin(), drafting.begin() + 8), doubling);
    // Then one step in kLongestPause + 1.
    for (std::size_t i = 8; i < drafting.size(); ++i)
      QCOMPARE(drafting[i] - drafting[i - 1], engine::DraftLength::kLongestPause + 1);
    QCOMPARE(drafting.size(), std::size_t(21));
    QCOMPARE(length.length(), 1);
  }

  void aKeptDraftEndsThePause() {
    engine::DraftLength length(4);
    for (int i = 0; i < 4; ++i) {
      while (length.next() == 0) {
      }
      length.record(1, 0);
    }
    QCOMPARE(length.paused(), 7);
    while (length.next() == 0) {
    }
    length.record(1, 1);  // the text turned repetitive
    QCOMPARE(length.paused(), 0);
    QCOMPARE(length.next(), 2);
    length.record(2, 0);  // a single miss only shortens the draft
    QCOMPARE(length.paused(), 0);
    QCOMPARE(length.next(), 1);
  }
};

QUIRE_TEST(SpeculativeDecodingTest)
QUIRE_TEST(DraftLengthTest)
#include "test_speculative_decoding.moc"
