// Speculative decoding in the server: with drafting configured, every
// request's job drafts (the statistics say so, and /v1/quire/stats adds
// them up), and a greedy reply is token for token the one without drafts.
// A setting changed while serving applies to the requests after it.

#include <QTest>
#include <chrono>

#include "quire/server/generator_jobs.h"
#include "served_model.h"
#include "test_main.h"

using namespace quire;
using namespace quire::engine;
using quire::server::ReplyChannel;
using quire::test::Model;
using quire::test::Served;

namespace {

// A block of random tokens said three times after BOS: a greedy reply
// that copies it gives the n-gram drafter something to find.
std::vector<cache::TokenId> drafts_prompt(std::uint32_t seed) {
  const std::vector<cache::TokenId> block = quire::test::prompt_of(13, seed);
  std::vector<cache::TokenId> prompt{1};
  for (int i = 0; i < 3; ++i)
    prompt.insert(prompt.end(), block.begin() + 1, block.end());
  return prompt;
}

JobRequest drafts_request(std::uint32_t seed) {
  JobRequest request;
  request.prompt = drafts_prompt(seed);
  request.sampling = SamplingSettings::greedy_settings();
  request.max_new_tokens = 40;
  request.stop_at_eos = false;
  return request;
}

DraftSettings ngram_drafts() {
  DraftSettings draft;
  draft.method = DraftSettings::Method::Ngram;
  draft.max_tokens = 5;
  return draft;
}

JobResult drafted_reply(server::JobHost& host, std::uint32_t seed) {
  const std::shared_ptr<ReplyChannel> channel = host.submit(drafts_request(seed), 1);
  if (!channel) return {};
  return channel->wait_results().front();
}

}  // namespace

class TestServerDrafts : public QObject {
  Q_OBJECT

 private slots:
  void everyRequestDraftsWithTheSameReply() {
    const Model model(52);
    Served plain(model, 4);
    Served drafting(model, 4, 64, ngram_drafts());
    std::int64_t drafted = 0, accepted = 0;
    for (std::uint32_t seed = 1; seed <= 4; ++seed) {
      const JobResult expected = drafted_reply(plain.host, seed);
      const JobResult result = drafted_reply(drafting.host, seed);
      QCOMPARE(expected.stop_reason, StopReason::MaxNewTokens);
      QCOMPARE(result.stop_reason, StopReason::MaxNewTokens);
      QCOMPARE(result.tokens, expected.tokens);
      QCOMPARE(result.text, expected.text);
      QCOMPARE(expected.statistics.drafted_tokens, std::int64_t{0});
      QVERIFY(result.statistics.drafted_tokens > 0);
      QVERIFY(result.statistics.draft_steps > 0);
      drafted += result.statistics.drafted_tokens;
      accepted += result.statistics.accepted_tokens;
    }
    // The copies of the repeated block are drafted and confirmed.
    QVERIFY(accepted > 0);
    // The server's statistics count what its finished jobs drafted.
    const server::EngineStats stats = drafting.host.stats();
    QCOMPARE(stats.drafted_tokens, drafted);
    QCOMPARE(stats.accepted_tokens, accepted);
    QCOMPARE(plain.host.stats().drafted_tokens, std::int64_t{0});
  }

  void aChangedSettingAppliesToLaterRequests() {
    const Model model(52);
    // Stepped here, as the application's engine worker steps its generator.
    kernels::CpuBackend backend;
    ModelRuntime runtime(model.description, backend,
                         quire::test::small_options(cache::CacheFormat::FP16, 64));
    Generator generator(runtime, *model.tokenizer);
    server::GeneratorJobs jobs(4, nullptr);
    const auto run = [&](std::uint32_t seed) {
      const std::shared_ptr<ReplyChannel> channel = jobs.submit(drafts_request(seed), 1);
      jobs.take(generator);
      generator.run_until_idle();
      return channel->wait_results().front();
    };
    QCOMPARE(run(1).statistics.drafted_tokens, std::int64_t{0});
    jobs.set_draft(ngram_drafts());
    QVERIFY(run(1).statistics.drafted_tokens > 0);
    jobs.set_draft({});
    QCOMPARE(run(1).statistics.drafted_tokens, std::int64_t{0});
  }

  void aDraftOutOfRangeIsRefused() {
    server::GeneratorJobs jobs(4, nullptr);
    DraftSettings draft = ngram_drafts();
    draft.max_tokens = 65;
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, jobs.set_draft(draft));
  }
};

QUIRE_TEST(TestServerDrafts)
#include "test_server_drafts.moc"
