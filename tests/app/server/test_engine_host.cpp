// The server's engine thread over a real (small, random) model: a request
// for n replies is n jobs that answer through one channel by choice, counts
// as n against the queue, is refused whole when it does not fit, computes
// its prompt once, and is cancelled whole.

#include <QTest>
#include <map>

#include "quire/server/completion_job.h"
#include "served_model.h"
#include "test_main.h"

using namespace quire;
using namespace quire::engine;
using quire::server::ReplyChannel;
using quire::test::Model;
using quire::test::Served;

namespace {

// The random model's logits are steep: a high temperature makes replies
// that differ by seed.
JobRequest sampled_request(int new_tokens) {
  JobRequest request;
  request.prompt = quire::test::prompt_of(45, 21);
  request.sampling.temperature = 40.0f;
  request.sampling.top_k = 0;
  request.sampling.top_p = 1.0f;
  request.sampling.seed = 1000;
  request.max_new_tokens = new_tokens;
  request.stop_at_eos = false;
  return request;
}

// Every choice's text as streamed, and the results, until all have ended.
struct Collected {
  std::vector<std::string> streamed;
  std::vector<JobResult> results;
};

Collected collect(ReplyChannel& channel) {
  Collected collected;
  collected.streamed.resize(static_cast<std::size_t>(channel.choices()));
  collected.results.resize(static_cast<std::size_t>(channel.choices()));
  std::vector<bool> ended(collected.results.size(), false);
  while (std::ranges::find(ended, false) != ended.end()) {
    ReplyChannel::Update update = channel.wait(std::chrono::milliseconds(100));
    for (std::size_t i = 0; i < update.text.size(); ++i) {
      collected.streamed[i] += update.text[i];
      if (update.done[i]) {
        collected.results[i] = std::move(*update.done[i]);
        ended[i] = true;
      }
    }
  }
  return collected;
}

}  // namespace

class TestEngineHost : public QObject {
  Q_OBJECT

 private slots:
  void choicesAnswerThroughOneChannel() {
    const Model model(52);
    Served served(model, 8);
    const std::shared_ptr<ReplyChannel> channel = served.host.submit(sampled_request(12), 3);
    QVERIFY(channel);
    QCOMPARE(channel->choices(), 3);
    const Collected collected = collect(*channel);
    for (std::size_t i = 0; i < 3; ++i) {
      const JobResult& result = collected.results[i];
      QCOMPARE(result.alternative, int(i));
      QCOMPARE(result.stop_reason, StopReason::MaxNewTokens);
      QCOMPARE(result.tokens.size(), std::size_t(12));
      QCOMPARE(collected.streamed[i], result.text);
    }
    QVERIFY(collected.results[0].tokens != collected.results[1].tokens ||
            collected.results[1].tokens != collected.results[2].tokens);

    // The prompt was computed once; the usage counts it once and adds up
    // the replies.
    // The jobs are counted out as they end; the cache's figures follow at
    // the host's next publication, after the step in which they ended.
    QTRY_COMPARE(served.host.stats().requests, qint64(1));
    QTRY_COMPARE(served.host.stats().cache.referenced_pages, 0);
    const server::EngineStats stats = served.host.stats();
    QCOMPARE(stats.running, std::size_t(0));
    QCOMPARE(stats.waiting, std::size_t(0));
    QCOMPARE(stats.cache.computed_tokens, qint64(45));
    QCOMPARE(stats.cache.branches, qint64(2));
    const server::Usage usage = server::request_usage(collected.results);
    QCOMPARE(usage.prompt_tokens, qint64(45));
    QCOMPARE(usage.cached_tokens, qint64(0));
    QCOMPARE(usage.completion_tokens, qint64(36));

    // Each choice is the lone reply with seed + its index, on a fresh cache
    // (so that its prompt is computed whole, as the first choice's was).
    for (int i = 0; i < 3; ++i) {
      Served alone(model, 8);
      JobRequest request = sampled_request(12);
      *request.sampling.seed += static_cast<std::uint64_t>(i);
      const std::shared_ptr<ReplyChannel> single = alone.host.submit(std::move(request));
      QVERIFY(single);
      const std::vector<JobResult> results = single->wait_results();
      QCOMPARE(results.size(), std::size_t(1));
      QCOMPARE(results[0].tokens, collected.results[std::size_t(i)].tokens);
      QCOMPARE(results[0].text, collected.results[std::size_t(i)].text);
    }
  }

  void choicesCountAgainstTheQueue() {
    const Model model(52);
    Served served(model, 4, 256);
    // 3 of 4 places taken for as long as the replies run (thousands of steps,
    // far longer than the submissions below take).
    const std::shared_ptr<ReplyChannel> three = served.host.submit(sampled_request(1300), 3);
    QVERIFY(three);
    QVERIFY(!served.host.submit(sampled_request(4), 2));  // refused whole
    QVERIFY(!served.host.submit(sampled_request(4), 5));  // more than ever fits
    QVERIFY(!served.host.submit(sampled_request(4), 0));
    const std::shared_ptr<ReplyChannel> one = served.host.submit(sampled_request(4), 1);
    QVERIFY(one);
    QVERIFY(!served.host.submit(sampled_request(4), 1));
    served.host.cancel(three);
    const std::vector<JobResult> cancelled = three->wait_results();
    QCOMPARE(cancelled.size(), std::size_t(3));
    for (const JobResult& result : cancelled)
      QCOMPARE(result.stop_reason, StopReason::Cancelled);
    QCOMPARE(one->wait_results()[0].stop_reason, StopReason::MaxNewTokens);
    // Every place is free again once the jobs have ended.
    QTRY_COMPARE(served.host.stats().requests, qint64(2));
    const std::shared_ptr<ReplyChannel> four = served.host.submit(sampled_request(2), 4);
    QVERIFY(four);
    for (const JobResult& result : four->wait_results())
      QCOMPARE(result.stop_reason, StopReason::MaxNewTokens);
  }

  void cancelEndsEveryChoice() {
    const Model model(52);
    // Room for two long replies: they run for thousands of steps, and the
    // client leaves after the first text.
    constexpr int kLong = 1900;
    Served served(model, 8, 256);
    const std::shared_ptr<ReplyChannel> channel = served.host.submit(sampled_request(kLong), 2);
    QVERIFY(channel);
    ReplyChannel::Update update;
    while (update.text.empty() || (update.text[0].empty() && update.text[1].empty())) {
      update = channel->wait(std::chrono::milliseconds(100));
    }
    served.host.cancel(channel);
    const Collected rest = collect(*channel);
    for (const JobResult& result : rest.results) {
      QCOMPARE(result.stop_reason, StopReason::Cancelled);
      QVERIFY(result.tokens.size() < std::size_t(kLong));
    }
    QTRY_COMPARE(served.host.stats().requests, qint64(1));
    QTRY_COMPARE(served.host.stats().cache.referenced_pages, 0);
    QCOMPARE(served.host.stats().cache.sequences, 0);
  }
};

QUIRE_TEST(TestEngineHost)
#include "test_engine_host.moc"
