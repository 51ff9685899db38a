// The server's jobs on a generator that another owner steps, as the desktop
// application's engine worker does: requests handed over from other threads
// wait until the owner takes them, run in the same batches as the owner's
// own jobs, count only themselves as running or waiting, and end with an
// error when the generator that held them is gone.

#include <QTemporaryDir>
#include <QTest>
#include <atomic>
#include <optional>
#include <thread>

#include "quire/server/generator_jobs.h"
#include "served_model.h"
#include "test_main.h"

using namespace quire;
using namespace quire::engine;
using quire::server::GeneratorJobs;
using quire::server::ReplyChannel;
using quire::test::Model;

namespace {

JobRequest greedy_request(int new_tokens) {
  JobRequest request;
  request.prompt = quire::test::prompt_of(40, 7);
  request.sampling.temperature = 0.0f;
  request.max_new_tokens = new_tokens;
  request.stop_at_eos = false;
  return request;
}

// A generator stepped by the test, with nothing else around it.
struct Owned {
  kernels::CpuBackend backend;
  ModelRuntime runtime;
  Generator generator;

  explicit Owned(const Model& model)
      : runtime(model.description, backend,
                quire::test::small_options(cache::CacheFormat::FP16, 64)),
        generator(runtime, *model.tokenizer) {}
};

// One request of greedy_request(2) handed over, taken and stepped to its end.
void finish_one(GeneratorJobs& jobs, Generator& generator) {
  const std::shared_ptr<ReplyChannel> channel = jobs.submit(greedy_request(2), 1);
  QVERIFY(channel);
  jobs.take(generator);
  while (jobs.holding())
    generator.step();
  channel->wait_results();
}

}  // namespace

class TestGeneratorJobs : public QObject {
  Q_OBJECT

 private slots:
  void requestsWaitForTheOwnerAndRunBesideItsJobs() {
    const Model model(31);
    Owned owned(model);
    std::atomic<int> wakes = 0;
    GeneratorJobs jobs(8, [&] { ++wakes; });

    // The owner's own job, which the server's counts leave out.
    bool own_done = false;
    JobRequest own = greedy_request(30);
    own.on_done = [&](const JobResult&) { own_done = true; };
    owned.generator.submit(std::move(own));
    owned.generator.step();

    std::shared_ptr<ReplyChannel> channel;
    std::thread handler([&] { channel = jobs.submit(greedy_request(6), 2); });
    handler.join();
    QVERIFY(channel);
    QCOMPARE(wakes.load(), 1);
    QVERIFY(jobs.pending());
    QCOMPARE(jobs.stats().waiting, std::size_t{2});
    QCOMPARE(jobs.stats().running, std::size_t{0});
    // Nothing reaches the generator before the owner takes it.
    QCOMPARE(owned.generator.running() + owned.generator.queued(), std::size_t{1});

    jobs.take(owned.generator);
    QVERIFY(!jobs.pending());
    QVERIFY(jobs.holding());
    owned.generator.step();
    jobs.publish(owned.generator);
    // The leader computes the prompt; its alternative waits to branch.
    const server::EngineStats during = jobs.stats();
    QCOMPARE(during.running + during.waiting, std::size_t{2});
    QVERIFY(during.running >= 1);
    QCOMPARE(owned.generator.running(), during.running + 1);

    while (jobs.holding())
      owned.generator.step();
    const std::vector<JobResult> results = channel->wait_results();
    QCOMPARE(results.size(), std::size_t{2});
    for (const JobResult& result : results) {
      QCOMPARE(result.stop_reason, StopReason::MaxNewTokens);
      QCOMPARE(result.tokens.size(), std::size_t{6});
    }
    // Counted out when they ended, before the owner publishes again: a client
    // that asks as soon as its reply is whole never sees it still running.
    QCOMPARE(jobs.stats().requests, std::int64_t{1});
    QCOMPARE(jobs.stats().running, std::size_t{0});
    QCOMPARE(jobs.stats().waiting, std::size_t{0});
    jobs.publish(owned.generator);
    QCOMPARE(jobs.stats().running, std::size_t{0});
    QCOMPARE(jobs.stats().waiting, std::size_t{0});
    QVERIFY(!own_done);  // the owner's longer job still runs
    owned.generator.run_until_idle();
    QVERIFY(own_done);
  }

  void aClosedHostRefusesAndCancellationsEndJobs() {
    const Model model(32);
    Owned owned(model);
    GeneratorJobs jobs(4, {});
    QVERIFY(!jobs.submit(greedy_request(4), 5));  // more than it ever holds
    const std::shared_ptr<ReplyChannel> channel = jobs.submit(greedy_request(200), 1);
    QVERIFY(channel);
    jobs.take(owned.generator);
    owned.generator.step();
    jobs.cancel(channel);
    jobs.take(owned.generator);
    while (jobs.holding())
      owned.generator.step();
    QCOMPARE(channel->wait_results().front().stop_reason, StopReason::Cancelled);
    jobs.close();
    QVERIFY(!jobs.submit(greedy_request(4), 1));
  }

  void abandonedJobsEndWithTheErrorAndFreeTheirPlaces() {
    const Model model(33);
    GeneratorJobs jobs(2, {});
    std::shared_ptr<ReplyChannel> channel;
    {
      Owned owned(model);
      channel = jobs.submit(greedy_request(200), 2);
      QVERIFY(channel);
      QVERIFY(!jobs.submit(greedy_request(4), 1));  // full
      jobs.take(owned.generator);
      owned.generator.step();
      jobs.abandon("The engine failed: a test");
      // The generator goes with the jobs' callbacks in it, never called.
    }
    QVERIFY(!jobs.holding());
    const std::vector<JobResult> results = channel->wait_results();
    QCOMPARE(results.size(), std::size_t{2});
    for (const JobResult& result : results) {
      QCOMPARE(result.stop_reason, StopReason::Error);
      QCOMPARE(result.error, std::string("The engine failed: a test"));
    }
    QVERIFY(jobs.submit(greedy_request(4), 2));  // both places free again
  }

  // GET /v1/quire/stats's disk_cache: absent without a tier, read when one is
  // there and again once a request finished, not at every step (reading it
  // lists the folder).
  void theDiskTierIsPublishedWhenRequestsFinish() {
    const Model model(34);
    Owned owned(model);
    GeneratorJobs jobs(4, {});
    jobs.publish(owned.generator);
    QVERIFY(!jobs.stats().disk_cache);

    QTemporaryDir folder;
    DiskTierOptions options;
    options.root = folder.path().toStdString();
    options.limit_bytes = std::uint64_t{16} << 20;
    const DiskTier& tier = owned.runtime.open_disk_tier(options);
    jobs.publish(owned.generator);
    std::optional<server::DiskCacheStats> disk = jobs.stats().disk_cache;
    QVERIFY(disk);
    QCOMPARE(disk->folder, tier.folder().string());
    QCOMPARE(disk->limit_bytes, options.limit_bytes);
    QCOMPARE(disk->pages, std::uint64_t{0});
    QCOMPARE(disk->written_pages, std::uint64_t{0});
    QVERIFY(!disk->disk_full);
    QCOMPARE(disk->notice, std::string());

    // 40 prompt tokens and 2 more: two full pages of 16, archived.
    finish_one(jobs, owned.generator);
    jobs.publish(owned.generator);
    QCOMPARE(jobs.stats().disk_cache->pages, std::uint64_t{0});
    QCOMPARE(owned.runtime.archive_cache().written, std::uint64_t{2});
    jobs.publish(owned.generator);
    QCOMPARE(jobs.stats().disk_cache->pages, std::uint64_t{0});  // no request finished since
    finish_one(jobs, owned.generator);
    jobs.publish(owned.generator);
    disk = jobs.stats().disk_cache;
    QVERIFY(disk);
    QCOMPARE(disk->pages, std::uint64_t{2});
    QCOMPARE(disk->written_pages, std::uint64_t{2});
    QVERIFY(disk->used_bytes > 0);
    QCOMPARE(disk->dropped_pages, std::uint64_t{0});

    owned.runtime.close_disk_tier();
    jobs.publish(owned.generator);
    QVERIFY(!jobs.stats().disk_cache);
  }
};

QUIRE_TEST(TestGeneratorJobs)
#include "test_generator_jobs.moc"
