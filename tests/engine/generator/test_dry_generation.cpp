// DRY through the generator: a job's sequence breakers are resolved against
// the tokenizer's vocabulary when it is submitted, so the reply is the one a
// sampler with those breaker tokens gives step by step.

#include <QTest>

#include "quire/engine/generator/generator.h"
#include "quire/engine/runtime/model_runtime.h"
#include "quire/kernels/cpu/cpu_backend.h"
#include "small_model.h"
#include "test_main.h"

using namespace quire;
using namespace quire::engine;

namespace {

constexpr int kDrySteps = 12;

// Greedy with a DRY penalty strong enough to turn any repeat away.
SamplingSettings strong_dry(std::vector<std::string> breakers) {
  SamplingSettings settings = SamplingSettings::greedy_settings();
  settings.dry_multiplier = 50;
  settings.dry_base = 1;
  settings.dry_allowed_length = 1;
  settings.dry_sequence_breakers = std::move(breakers);
  return settings;
}

// The reply a sampler with these breaker tokens gives, one prefill per step.
std::vector<cache::TokenId> step_by_step(ModelRuntime& runtime, const SamplingSettings& settings,
                                         std::vector<std::int32_t> breaker_tokens,
                                         std::vector<cache::TokenId> tokens) {
  Sampler sampler(settings);
  sampler.set_dry_breaker_tokens(std::move(breaker_tokens));
  std::vector<cache::TokenId> reply;
  for (int step = 0; step < kDrySteps; ++step) {
    const std::vector<float> row = runtime.prefill(tokens, false).back();
    const cache::TokenId next = sampler.sample(row, tokens);
    reply.push_back(next);
    tokens.push_back(next);
  }
  return reply;
}

}  // namespace

class DryGenerationTest : public QObject {
  Q_OBJECT

 private slots:
  void breakersAreResolvedWhenAJobIsSubmitted() {
    test::SmallModel model(test::qwen2_spec(23));
    const Tokenizer& tokenizer = *model.tokenizer;
    kernels::CpuBackend backend;
    ModelRuntime reference(model.description, backend, test::small_options());

    // A prompt that repeats itself, and as the breaker the text of its last
    // token: with it resolved nothing before that token can be matched.
    const std::vector<cache::TokenId> base = test::prompt_of(6, 5);
    std::vector<cache::TokenId> prompt = base;
    prompt.insert(prompt.end(), base.begin() + 1, base.end());
    prompt.insert(prompt.end(), base.begin() + 1, base.end() - 1);
    const std::string breaker = tokenizer.token_bytes(prompt.back());
    QVERIFY(!breaker.empty());
    const SamplingSettings settings = strong_dry({breaker});
    const std::vector<std::int32_t> breaker_tokens =
        dry_breaker_tokens(settings.dry_sequence_breakers, tokenizer.vocab_size(),
                           [&tokenizer](std::int32_t id) { return tokenizer.token_bytes(id); });
    QVERIFY(!breaker_tokens.empty());

    const std::vector<cache::TokenId> expected =
        step_by_step(reference, settings, breaker_tokens, prompt);
    // The breakers change the reply here, so the comparison below can tell.
    QVERIFY(expected != step_by_step(reference, settings, {}, prompt));

    ModelRuntime runtime(model.description, backend, test::small_options());
    Generator generator(runtime, tokenizer);
    JobRequest request;
    request.prompt = prompt;
    request.sampling = settings;
    request.max_new_tokens = kDrySteps;
    request.stop_at_eos = false;
    JobResult result;
    request.on_done = [&](const JobResult& done) { result = done; };
    generator.submit(std::move(request));
    generator.run_until_idle();
    QCOMPARE(result.stop_reason, StopReason::MaxNewTokens);
    QCOMPARE(result.tokens, expected);
  }
};

QUIRE_TEST(DryGenerationTest)
#include "test_dry_generation.moc"
