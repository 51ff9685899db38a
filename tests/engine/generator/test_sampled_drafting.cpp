// Sampled jobs with the n-gram drafter on the small random model: they draft
// and verify by speculative sampling's rejection rule, replies are whole and
// valid, stop conditions and max_new_tokens hold exactly, a seed reproduces
// the reply, and pages shared with other chats keep their hashes. (That the
// rule keeps the target's distribution is test_speculative_sampling.cpp's.)

#include <QTest>
#include <algorithm>
#include <map>
#include <vector>

#include "quire/engine/generator/generator.h"
#include "quire/engine/runtime/model_runtime.h"
#include "quire/kernels/cpu/cpu_backend.h"
#include "small_model.h"
#include "speculative_test_support.h"
#include "test_main.h"

namespace sampled_drafting_test {

using quire::cache::TokenId;
using quire::engine::JobRequest;
using quire::engine::JobResult;
using quire::engine::SamplingSettings;

// Every filter on, at a temperature low enough that prompt lookup's drafts
// are kept now and then, and still often turned down.
SamplingSettings sampled_settings(std::uint64_t seed) {
  SamplingSettings settings;
  settings.temperature = 0.3f;
  settings.top_k = 40;
  settings.top_p = 0.95f;
  settings.min_p = 0.01f;
  // The small random model says one token over and over unless penalized.
  settings.repetition_penalty = 3.0f;
  settings.frequency_penalty = 4.0f;
  settings.presence_penalty = 4.0f;
  settings.penalty_range = 8;
  settings.seed = seed;
  return settings;
}

JobRequest sampled_request(std::vector<TokenId> prompt, int max_new, std::uint64_t seed,
                           bool draft = true) {
  JobRequest request;
  request.prompt = std::move(prompt);
  request.sampling = sampled_settings(seed);
  request.max_new_tokens = max_new;
  request.stop_at_eos = false;
  if (draft) {
    request.draft.method = quire::engine::DraftSettings::Method::Ngram;
    request.draft.max_tokens = 5;
  }
  return request;
}

std::vector<std::vector<TokenId>> sampled_prompts() {
  std::vector<std::vector<TokenId>> all;
  for (std::uint32_t seed = 1; seed <= 4; ++seed)
    all.push_back(quire::test::repeating_prompt(8 + int(seed) * 2, 3, seed));
  for (std::uint32_t seed = 21; seed <= 22; ++seed)
    all.push_back(quire::test::prompt_of(24, seed));
  return all;
}

std::vector<JobRequest> sampled_requests(int max_new, std::uint64_t seed) {
  std::vector<JobRequest> requests;
  for (const std::vector<TokenId>& prompt : sampled_prompts())
    requests.push_back(sampled_request(prompt, max_new, seed + requests.size()));
  return requests;
}

bool valid_reply(const JobResult& result, const quire::test::SmallModel& model, int vocab) {
  return result.error.empty() &&
         result.statistics.generated_tokens == static_cast<std::int64_t>(result.tokens.size()) &&
         std::all_of(result.tokens.begin(), result.tokens.end(),
                     [vocab](TokenId token) { return token >= 0 && token < vocab; }) &&
         result.text == model.tokenizer->decode(result.tokens) &&
         result.statistics.accepted_tokens <= result.statistics.drafted_tokens;
}

}  // namespace sampled_drafting_test

class SampledDraftingTest : public QObject {
  Q_OBJECT

 private slots:
  void sampledJobsDraftAndVerify_data() {
    // An FP16 cache verifies drafts as single-token sequences, a coded one
    // as one chunk; small pages put drafts across page ends.
    QTest::addColumn<bool>("coded");
    QTest::addColumn<int>("page_size");
    QTest::newRow("fp16") << false << 16;
    QTest::newRow("fp16, small pages") << false << 4;
    QTest::newRow("q8") << true << 16;
  }

  void sampledJobsDraftAndVerify() {
    namespace t = sampled_drafting_test;
    QFETCH(bool, coded);
    QFETCH(int, page_size);
    const quire::test::SmallModel model(quire::test::qwen2_spec(81));
    const auto format = coded ? quire::cache::CacheFormat::Q8 : quire::cache::CacheFormat::FP16;
    const auto options = quire::test::small_options(format, 1024 / page_size, page_size);
    const std::vector<t::JobResult> results =
        quire::test::run_each(model, options, t::sampled_requests(40, 100));
    std::int64_t drafted = 0, accepted = 0, steps = 0;
    for (const t::JobResult& result : results) {
      QVERIFY2(t::valid_reply(result, model, 512), result.error.c_str());
      QCOMPARE(result.stop_reason, quire::engine::StopReason::MaxNewTokens);
      QCOMPARE(result.tokens.size(), std::size_t(40));
      drafted += result.statistics.drafted_tokens;
      accepted += result.statistics.accepted_tokens;
      steps += result.statistics.draft_steps;
    }
    // Drafts were verified, and both kept and turned down.
    QVERIFY(steps > 0);
    QVERIFY(accepted > 0);
    QVERIFY(drafted > accepted);
    // The same requests again: a seed gives the same reply.
    const std::vector<t::JobResult> again =
        quire::test::run_each(model, options, t::sampled_requests(40, 100));
    for (std::size_t i = 0; i < results.size(); ++i)
      QCOMPARE(again[i].tokens, results[i].tokens);
  }

  void aSeedReproducesTheReply() {
    namespace t = sampled_drafting_test;
    const quire::test::SmallModel model(quire::test::qwen2_spec(82));
    const auto options = quire::test::small_options();
    const std::vector<t::JobResult> first =
        quire::test::run_each(model, options, t::sampled_requests(32, 7));
    const std::vector<t::JobResult> second =
        quire::test::run_each(model, options, t::sampled_requests(32, 7));
    const std::vector<t::JobResult> reseeded =
        quire::test::run_each(model, options, t::sampled_requests(32, 1007));
    int differ = 0;
    for (std::size_t i = 0; i < first.size(); ++i) {
      QCOMPARE(second[i].tokens, first[i].tokens);
      QCOMPARE(second[i].statistics.accepted_tokens, first[i].statistics.accepted_tokens);
      if (reseeded[i].tokens != first[i].tokens) ++differ;
    }
    QVERIFY(differ > 0);
    // A batch of them, twice, on generators of their own.
    std::vector<std::vector<t::JobResult>> batches;
    for (int run = 0; run < 2; ++run) {
      quire::kernels::CpuBackend backend;
      quire::engine::ModelRuntime runtime(model.description, backend, options);
      quire::engine::Generator generator(runtime, *model.tokenizer);
      batches.push_back(quire::test::run_all(generator, t::sampled_requests(32, 7)));
      QVERIFY(runtime.cache().check_invariants().empty());
    }
    std::int64_t drafted = 0;
    for (std::size_t i = 0; i < first.size(); ++i) {
      QCOMPARE(batches[1][i].tokens, batches[0][i].tokens);
      QVERIFY(t::valid_reply(batches[0][i], model, 512));
      drafted += batches[0][i].statistics.drafted_tokens;
    }
    QVERIFY(drafted > 0);
  }

  // Top-k of one leaves the target a point mass on the argmax: a sampled
  // job with drafts must then give the greedy reply without them, token for
  // token, penalties included.
  void aPointMassTargetKeepsTheGreedyReply() {
    namespace t = sampled_drafting_test;
    const quire::test::SmallModel model(quire::test::qwen2_spec(83));
    std::vector<t::JobRequest> greedy, sampled;
    for (const std::vector<t::TokenId>& prompt : t::sampled_prompts()) {
      t::JobRequest drafting = t::sampled_request(prompt, 36, 5);
      drafting.sampling.top_k = 1;
      t::JobRequest plain = t::sampled_request(prompt, 36, 5, false);
      plain.sampling = t::SamplingSettings::greedy_settings();
      // The same penalties: greedy, with nothing else on.
      plain.sampling.repetition_penalty = drafting.sampling.repetition_penalty;
      plain.sampling.frequency_penalty = drafting.sampling.frequency_penalty;
      plain.sampling.presence_penalty = drafting.sampling.presence_penalty;
      plain.sampling.penalty_range = drafting.sampling.penalty_range;
      greedy.push_back(plain);
      sampled.push_back(drafting);
    }
    const auto options = quire::test::small_options();
    const std::vector<t::JobResult> expected = quire::test::run_each(model, options, greedy);
    const std::vector<t::JobResult> drafted = quire::test::run_each(model, options, sampled);
    std::int64_t accepted = 0, rejected = 0;
    for (std::size_t i = 0; i < expected.size(); ++i) {
      QCOMPARE(drafted[i].tokens, expected[i].tokens);
      QCOMPARE(drafted[i].text, expected[i].text);
      accepted += drafted[i].statistics.accepted_tokens;
      rejected += drafted[i].statistics.drafted_tokens - drafted[i].statistics.accepted_tokens;
    }
    QVERIFY(accepted > 0);
    QVERIFY(rejected > 0);
  }

  // A stop condition does not change what is drawn before it, so a seeded
  // reply that stops is exactly the free reply cut where it stops.
  void stopConditionsHoldExactly() {
    namespace t = sampled_drafting_test;
    using quire::engine::StopReason;
    const quire::test::SmallModel model(quire::test::qwen2_spec(84));
    const auto options = quire::test::small_options();
    const std::vector<t::TokenId> prompt = quire::test::repeating_prompt(9, 3, 5);
    const t::JobResult free_run =
        quire::test::run_each(model, options, {t::sampled_request(prompt, 48, 11)}).front();
    QCOMPARE(free_run.tokens.size(), std::size_t(48));
    QVERIFY(free_run.statistics.accepted_tokens > 0);
    // A token first said late in the reply.
    std::size_t late = 20;
    while (late < free_run.tokens.size() &&
           std::find(free_run.tokens.begin(), free_run.tokens.begin() + std::ptrdiff_t(late),
                     free_run.tokens[late]) != free_run.tokens.begin() + std::ptrdiff_t(late)) {
      ++late;
    }
    QVERIFY(late < free_run.tokens.size());
    const std::string stop_text = free_run.text.substr(free_run.text.size() * 2 / 3, 3);
    const std::size_t stop_at = free_run.text.find(stop_text);

    std::vector<t::JobRequest> variants;
    t::JobRequest by_token = t::sampled_request(prompt, 48, 11);
    by_token.stop_tokens = {free_run.tokens[late]};
    variants.push_back(std::move(by_token));
    t::JobRequest by_string = t::sampled_request(prompt, 48, 11);
    by_string.stop_strings = {stop_text};
    variants.push_back(std::move(by_string));
    for (const int max_new : {1, 2, 7, 13})
      variants.push_back(t::sampled_request(prompt, max_new, 11));
    const std::vector<t::JobResult> results =
        quire::test::run_each(model, options, std::move(variants));

    QCOMPARE(results[0].stop_reason, StopReason::StopToken);
    QCOMPARE(results[0].tokens,
             std::vector<t::TokenId>(free_run.tokens.begin(),
                                     free_run.tokens.begin() + std::ptrdiff_t(late)));
    QCOMPARE(results[1].stop_reason, StopReason::StopString);
    QCOMPARE(results[1].stop_string, stop_text);
    QCOMPARE(results[1].text, free_run.text.substr(0, stop_at));
    QVERIFY(
        std::equal(results[1].tokens.begin(), results[1].tokens.end(), free_run.tokens.begin()));
    // max_new_tokens holds exactly, however far drafts would reach.
    const int limits[] = {1, 2, 7, 13};
    for (std::size_t i = 0; i < 4; ++i) {
      const t::JobResult& limited = results[2 + i];
      QCOMPARE(limited.stop_reason, StopReason::MaxNewTokens);
      QCOMPARE(limited.tokens.size(), std::size_t(limits[i]));
      QVERIFY(t::valid_reply(limited, model, 512));
      // Each step that verified drafts gave its kept drafts and one token more.
      QVERIFY(limited.statistics.accepted_tokens + limited.statistics.draft_steps <=
              std::int64_t(limits[i]));
    }
    // One or two tokens leave no room for a draft: the first comes from the
    // prompt's pass, and a draft must be followed by a token the job may emit.
    QCOMPARE(results[2].statistics.drafted_tokens, std::int64_t(0));
    QCOMPARE(results[3].statistics.drafted_tokens, std::int64_t(0));
  }

  void sharedPagesKeepTheirHashes() {
    namespace t = sampled_drafting_test;
    const quire::test::SmallModel model(quire::test::qwen2_spec(85));
    quire::kernels::CpuBackend backend;
    quire::engine::ModelRuntime runtime(
        model.description, backend,
        quire::test::small_options(quire::cache::CacheFormat::FP16, 128));
    quire::engine::Generator generator(runtime, *model.tokenizer);
    // A first turn leaves the shared prefix sealed in the cache.
    const std::vector<t::TokenId> prefix = quire::test::repeating_prompt(12, 4, 21);
    quire::test::run_all(generator, {t::sampled_request(prefix, 20, 3)});
    const auto before = quire::test::sealed_pages(runtime.cache());
    QVERIFY(before.size() >= 3);

    // Then several sampled jobs that share it decode with drafts at once.
    std::vector<t::JobResult> results(4);
    for (std::uint32_t j = 0; j < 4; ++j) {
      std::vector<t::TokenId> prompt = prefix;
      const std::vector<t::TokenId> tail = quire::test::prompt_of(6 + int(j), 50 + j);
      prompt.insert(prompt.end(), tail.begin() + 1, tail.end());
      t::JobRequest request = t::sampled_request(prompt, 36, 60 + j);
      request.on_done = [&results, j](const t::JobResult& done) { results[j] = done; };
      generator.submit(std::move(request));
    }
    std::int64_t steps = 0;
    while (generator.step()) {
      ++steps;
      QVERIFY(runtime.cache().check_invariants().empty());
      const auto now = quire::test::sealed_pages(runtime.cache());
      for (const auto& [page, hash] : before) {
        QVERIFY(now.contains(page));
        QCOMPARE(now.at(page), hash);
      }
    }
    QVERIFY(steps > 0);
    std::int64_t drafted = 0;
    for (const t::JobResult& result : results) {
      QCOMPARE(result.stop_reason, quire::engine::StopReason::MaxNewTokens);
      QCOMPARE(result.tokens.size(), std::size_t(36));
      QVERIFY(result.statistics.cached_tokens >= std::int64_t(before.size()) * 16 - 16);
      drafted += result.statistics.drafted_tokens;
    }
    QVERIFY(drafted > 0);
  }
};

QUIRE_TEST(SampledDraftingTest)
#include "test_sampled_drafting.moc"
