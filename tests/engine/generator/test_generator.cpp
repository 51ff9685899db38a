// The generator over real (small, random) models: greedy decoding against the
// logits, batching, multi-turn reuse, stopping, cancelling, and the cache's
// pages through thousands of random jobs.

#include <QTest>
#include <random>

#include "quire/engine/generator/conversation.h"
#include "quire/engine/generator/generator.h"
#include "quire/engine/generator/prompt_format.h"
#include "quire/engine/modelgen/random_model_spec.h"
#include "quire/engine/runtime/model_runtime.h"
#include "quire/kernels/cpu/cpu_backend.h"
#include "small_model.h"
#include "test_main.h"

using namespace quire;
using namespace quire::engine;
using quire::test::prompt_of;
using quire::test::small_options;
using quire::test::SmallModel;

Q_DECLARE_METATYPE(cache::CacheFormat)

namespace {

JobRequest greedy_request(std::vector<cache::TokenId> prompt, int max_new) {
  JobRequest request;
  request.prompt = std::move(prompt);
  request.sampling = SamplingSettings::greedy_settings();
  request.max_new_tokens = max_new;
  request.stop_at_eos = false;
  return request;
}

JobResult run_one(Generator& generator, JobRequest request) {
  JobResult result;
  request.on_done = [&](const JobResult& done) { result = done; };
  generator.submit(std::move(request));
  generator.run_until_idle();
  return result;
}

std::int32_t argmax(const std::vector<float>& logits) {
  return static_cast<std::int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
}

bool valid_utf8(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    const int length = c < 0x80         ? 1
                       : (c >> 5) == 6  ? 2
                       : (c >> 4) == 14 ? 3
                       : (c >> 3) == 30 ? 4
                                        : 0;
    if (length == 0 || i + std::size_t(length) > text.size()) return false;
    for (int k = 1; k < length; ++k) {
      if ((static_cast<unsigned char>(text[i + std::size_t(k)]) >> 6) != 2) return false;
    }
    i += std::size_t(length);
  }
  return true;
}

}  // namespace

class GeneratorTest : public QObject {
  Q_OBJECT

 private slots:
  void greedyEqualsStepByStepArgmax_data() {
    QTest::addColumn<QString>("format");
    for (const char* format : {"fp16", "bf16", "exl2:4.0", "gptq"})
      QTest::newRow(format) << format;
  }

  void greedyEqualsStepByStepArgmax() {
    QFETCH(QString, format);
    modelgen::RandomModelSpec spec;
    spec.format = modelgen::parse_format(format.toStdString());
    spec.seed = 41;
    SmallModel model(spec);
    kernels::CpuBackend backend;

    ModelRuntime runtime(model.description, backend, small_options());
    Generator generator(runtime, *model.tokenizer);
    const std::vector<cache::TokenId> prompt = prompt_of(37, 5);
    const JobResult result = run_one(generator, greedy_request(prompt, 20));
    QCOMPARE(result.stop_reason, StopReason::MaxNewTokens);
    QCOMPARE(result.tokens.size(), std::size_t(20));

    // The same, one `logits` call per step on a separate runtime.
    ModelRuntime reference(model.description, backend, small_options());
    std::vector<cache::TokenId> tokens = prompt;
    for (int step = 0; step < 20; ++step) {
      const cache::TokenId next = argmax(reference.prefill(tokens, false).back());
      QCOMPARE(result.tokens[std::size_t(step)], next);
      tokens.push_back(next);
    }
  }

  void aBatchGivesWhatEachJobGivesAlone() {
    modelgen::RandomModelSpec spec;
    spec.architecture = "qwen2";
    spec.seed = 42;
    SmallModel model(spec);
    kernels::CpuBackend backend;

    std::vector<std::vector<cache::TokenId>> alone;
    for (int j = 0; j < 5; ++j) {
      ModelRuntime runtime(model.description, backend, small_options());
      Generator generator(runtime, *model.tokenizer);
      alone.push_back(
          run_one(generator, greedy_request(prompt_of(10 + 17 * j, 100 + j), 12 + j)).tokens);
    }
    ModelRuntime runtime(model.description, backend, small_options());
    Generator generator(runtime, *model.tokenizer);
    std::vector<JobResult> together(5);
    for (int j = 0; j < 5; ++j) {
      JobRequest request = greedy_request(prompt_of(10 + 17 * j, 100 + j), 12 + j);
      request.on_done = [&, j](const JobResult& done) { together[std::size_t(j)] = done; };
      generator.submit(std::move(request));
    }
    generator.run_until_idle();
    for (int j = 0; j < 5; ++j)
      QCOMPARE(together[std::size_t(j)].tokens, alone[std::size_t(j)]);
  }

  void eachTurnComputesOnlyItsNewTokens_data() {
    QTest::addColumn<cache::CacheFormat>("format");
    for (const cache::CacheFormat format : cache::all_cache_formats()) {
      QTest::newRow(cache::format_info(format).name.data()) << format;
    }
  }

  void eachTurnComputesOnlyItsNewTokens() {
    QFETCH(cache::CacheFormat, format);
    modelgen::RandomModelSpec spec;
    spec.seed = 43;
    SmallModel model(spec);
    kernels::CpuBackend backend;
    ModelRuntime runtime(model.description, backend, small_options(format, 160));
    Generator generator(runtime, *model.tokenizer);
    Conversation conversation(PromptFormatId::ChatML, *model.tokenizer, "You are a test.");
    std::int64_t held = 0;  // tokens of the conversation whose K/V the cache holds
    for (int turn = 0; turn < 10; ++turn) {
      const std::vector<cache::TokenId> prompt =
          conversation.begin_turn("Question number " + std::to_string(turn) + ", please answer.");
      JobRequest request = greedy_request(prompt, 6 + turn % 4);
      const JobResult result = run_one(generator, std::move(request));
      const JobStatistics& stats = result.statistics;
      const std::int64_t new_tokens = static_cast<std::int64_t>(prompt.size()) - held;
      QVERIFY2(stats.computed_tokens <= new_tokens + 1,
               qPrintable(QString("turn %1 computed %2 of %3 new tokens")
                              .arg(turn)
                              .arg(stats.computed_tokens)
                              .arg(new_tokens)));
      if (turn > 0) QVERIFY(stats.cached_tokens >= held - 1);
      conversation.end_turn(result.tokens, false);
      // Everything but the reply's last token was computed into the cache.
      held = static_cast<std::int64_t>(prompt.size() + result.tokens.size()) - 1;
    }
    QVERIFY(runtime.cache().check_invariants().empty());
  }

  void stopStringsAcrossTokensAndMaxNewTokens() {
    modelgen::RandomModelSpec spec;
    spec.seed = 44;
    SmallModel model(spec);
    kernels::CpuBackend backend;
    ModelRuntime runtime(model.description, backend, small_options());
    Generator generator(runtime, *model.tokenizer);
    const std::vector<cache::TokenId> prompt = model.tokenizer->encode("Tell me a story", true);

    std::vector<std::string> deltas;
    JobRequest plain = greedy_request(prompt, 40);
    plain.on_text = [&](JobId, std::string_view text) { deltas.emplace_back(text); };
    const JobResult full = run_one(generator, std::move(plain));
    QCOMPARE(full.stop_reason, StopReason::MaxNewTokens);
    QCOMPARE(full.tokens.size(), std::size_t(40));
    std::string streamed;
    for (const std::string& delta : deltas) {
      QVERIFY(valid_utf8(delta));
      streamed += delta;
    }
    QCOMPARE(streamed, full.text);
    QCOMPARE(full.text, model.tokenizer->decode(full.tokens));

    // A stop string spanning the text of two tokens, found in the full reply.
    const std::string first = model.tokenizer->decode(std::span(full.tokens).first(10));
    const std::string second = model.tokenizer->decode(std::span(full.tokens).first(12));
    QVERIFY(second.size() > first.size() + 1);
    const std::string stop = second.substr(first.size() - 1, 2);
    const std::size_t at = full.text.find(stop);
    JobRequest stopping = greedy_request(prompt, 40);
    stopping.stop_strings = {stop};
    const JobResult stopped = run_one(generator, std::move(stopping));
    QCOMPARE(stopped.stop_reason, StopReason::StopString);
    QCOMPARE(stopped.stop_string, stop);
    QCOMPARE(stopped.text, full.text.substr(0, at));
  }

  void cancelEndsAJobMidStream() {
    modelgen::RandomModelSpec spec;
    spec.seed = 45;
    SmallModel model(spec);
    kernels::CpuBackend backend;
    ModelRuntime runtime(model.description, backend, small_options());
    Generator generator(runtime, *model.tokenizer);
    JobResult result;
    int pieces = 0;
    JobRequest request = greedy_request(prompt_of(20, 3), 200);
    request.on_text = [&](JobId id, std::string_view) {
      if (++pieces == 3) generator.cancel(id);
    };
    request.on_done = [&](const JobResult& done) { result = done; };
    generator.submit(std::move(request));
    generator.run_until_idle();
    QCOMPARE(result.stop_reason, StopReason::Cancelled);
    QVERIFY(result.tokens.size() >= 3 && result.tokens.size() < 200);
    QCOMPARE(runtime.cache().stats().referenced_pages, 0);
  }

  void jobsThatNeverFitAreRefusedAndOthersWait() {
    modelgen::RandomModelSpec spec;
    spec.seed = 46;
    SmallModel model(spec);
    kernels::CpuBackend backend;
    ModelRuntime runtime(model.description, backend, small_options(cache::CacheFormat::FP16, 8));
    Generator generator(runtime, *model.tokenizer);  // 8 pages of 16 tokens

    const JobResult refused = run_one(generator, greedy_request(prompt_of(100, 1), 40));
    QCOMPARE(refused.stop_reason, StopReason::Error);
    QVERIFY2(refused.error.find("needs 140 tokens") != std::string::npos, refused.error.c_str());

    // Two jobs of 6 pages each cannot run together: the second waits its turn.
    std::vector<JobResult> results(2);
    for (int j = 0; j < 2; ++j) {
      JobRequest request = greedy_request(prompt_of(60, 10 + j), 30);
      request.on_done = [&, j](const JobResult& done) { results[std::size_t(j)] = done; };
      generator.submit(std::move(request));
    }
    generator.step();
    QCOMPARE(generator.running(), std::size_t(1));
    QCOMPARE(generator.queued(), std::size_t(1));
    generator.run_until_idle();
    for (const JobResult& result : results) {
      QCOMPARE(result.stop_reason, StopReason::MaxNewTokens);
      QCOMPARE(result.tokens.size(), std::size_t(30));
    }
  }

  // The candidate path (top logits on the backend, the row fetched only when
  // they do not decide) gives every job the tokens whole rows give, batched
  // with prefills, for greedy and sampled jobs alike.
  void candidatesGiveWhatWholeRowsGive() {
    modelgen::RandomModelSpec spec;
    spec.seed = 48;
    SmallModel model(spec);
    kernels::CpuBackend backend;
    std::vector<SamplingSettings> settings(6);
    settings[0] = SamplingSettings::greedy_settings();
    settings[2].top_k = 0;  // top-p alone
    settings[3].top_k = 0;
    settings[3].top_p = 1;
    settings[3].min_p = 0.05f;
    settings[4].repetition_penalty = 1.3f;
    settings[4].frequency_penalty = 0.2f;
    settings[4].token_bias[7] = 30.0f;
    settings[4].banned_tokens = {3, 4};
    settings[5].temperature = 1.5f;
    settings[5].top_k = 0;
    settings[5].top_p = 1;  // nothing to cut with: rows fall back
    const auto run = [&](GeneratorConfig::Logits logits, SamplingCounters& counters) {
      ModelRuntime runtime(model.description, backend, small_options());
      GeneratorConfig config;
      config.logits = logits;
      Generator generator(runtime, *model.tokenizer, config);
      std::vector<JobResult> results(settings.size());
      for (std::size_t j = 0; j < settings.size(); ++j) {
        JobRequest request = greedy_request(prompt_of(20 + 9 * int(j), 200 + std::uint32_t(j)), 24);
        request.sampling = settings[j];
        request.sampling.seed = 1000 + j;
        request.on_done = [&results, j](const JobResult& done) { results[j] = done; };
        generator.submit(std::move(request));
      }
      generator.run_until_idle();
      counters = generator.sampling_counters();
      return results;
    };
    SamplingCounters whole, candidates;
    const std::vector<JobResult> expected = run(GeneratorConfig::Logits::WholeRows, whole);
    const std::vector<JobResult> actual = run(GeneratorConfig::Logits::Candidates, candidates);
    for (std::size_t j = 0; j < settings.size(); ++j) {
      QCOMPARE(actual[j].stop_reason, expected[j].stop_reason);
      QCOMPARE(actual[j].tokens, expected[j].tokens);
    }
    QCOMPARE(whole.from_candidates + whole.row_fetches, std::int64_t{0});
    QVERIFY(candidates.from_candidates > 0);
    QVERIFY(candidates.row_fetches > 0);  // the job with nothing to cut
  }

  void thousandsOfRandomJobsLeaveNoPageBehind_data() {
    QTest::addColumn<int>("policy");
    QTest::newRow("reserve") << int(cache::ReservationPolicy::ReserveOnAdmission);
    QTest::newRow("on demand") << int(cache::ReservationPolicy::OnDemand);
  }

  void thousandsOfRandomJobsLeaveNoPageBehind() {
    QFETCH(int, policy);
    modelgen::RandomModelSpec spec;
    spec.layers = 1;
    spec.hidden = 64;
    spec.heads = 2;
    spec.kv_heads = 1;
    spec.intermediate = 64;
    spec.seed = 47;
    SmallModel model(spec);
    kernels::CpuBackend backend;
    RuntimeOptions options = small_options(cache::CacheFormat::Q4, 24, 8);
    options.reservation = static_cast<cache::ReservationPolicy>(policy);
    ModelRuntime runtime(model.description, backend, options);
    GeneratorConfig config;
    config.max_batch_size = 6;
    config.max_step_tokens = 32;
    Generator generator(runtime, *model.tokenizer, config);

    std::mt19937 rng(7);
    std::vector<std::vector<cache::TokenId>> prefixes{prompt_of(30, 1), prompt_of(45, 2)};
    int finished = 0, submitted = 0;
    std::vector<JobId> live;
    for (int round = 0; round < 1500; ++round) {
      const int action = int(rng() % 10);
      if (action < 3 && submitted < 2000) {
        std::vector<cache::TokenId> prompt = prefixes[rng() % 2];
        prompt.resize(1 + rng() % prompt.size());
        for (int extra = int(rng() % 20); extra > 0; --extra)
          prompt.push_back(cache::TokenId(3 + rng() % 400));
        JobRequest request = greedy_request(std::move(prompt), 1 + int(rng() % 40));
        if (rng() % 2) request.sampling = SamplingSettings{};
        request.sampling.seed = rng();
        request.on_done = [&](const JobResult& done) {
          ++finished;
          QVERIFY(done.stop_reason != StopReason::Error ||
                  done.error.find("needs") != std::string::npos);
        };
        live.push_back(generator.submit(std::move(request)));
        ++submitted;
      } else if (action == 3 && !live.empty()) {
        generator.cancel(live[rng() % live.size()]);
      } else {
        generator.step();
      }
      if (round % 50 == 0) {
        const auto problems = runtime.cache().check_invariants();
        QVERIFY2(problems.empty(), problems.empty() ? "" : problems.front().c_str());
      }
    }
    generator.run_until_idle();
    QCOMPARE(finished, submitted);
    const cache::CacheStats stats = runtime.cache().stats();
    QCOMPARE(stats.referenced_pages, 0);
    QCOMPARE(stats.free_pages + stats.cached_pages, stats.total_pages);
    QVERIFY(runtime.cache().check_invariants().empty());
    if (options.reservation == cache::ReservationPolicy::OnDemand) QVERIFY(stats.preemptions > 0);
  }
};

QUIRE_TEST(GeneratorTest)
#include "test_generator.moc"
