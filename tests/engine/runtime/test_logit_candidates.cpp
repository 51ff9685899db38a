// ForwardPass's candidate requests on the CPU backend: a step where some
// sequences ask for candidates and others for whole rows gives the rows of
// the latter as a step without requests does, candidates equal to the host
// reference over the same rows, the gathered logits, and the whole row on
// request afterwards.

#include <QTest>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "quire/kernels/top_logits.h"
#include "runtime_test_support.h"
#include "test_main.h"

using namespace quire;
using quire::test::TestModel;

namespace {

engine::RuntimeOptions options() {
  engine::RuntimeOptions o;
  o.cache_tokens = 512;
  o.page_size = 16;
  o.max_chunk_tokens = 64;
  o.reserve_bytes = 0;
  return o;
}

bool same_bits(std::span<const float> a, std::span<const float> b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size_bytes()) == 0;
}

}  // namespace

class LogitCandidatesTest : public QObject {
  Q_OBJECT

 private slots:
  void mixedRequestsGiveRowsCandidatesAndGathers() {
    engine::modelgen::RandomModelSpec spec;
    spec.vocab = 700;
    spec.seed = 17;
    TestModel model(spec);
    kernels::CpuBackend cpu;
    const int vocab = spec.vocab;

    // Three sequences of different lengths on their own pages.
    std::vector<std::vector<cache::TokenId>> prompts;
    std::vector<std::vector<cache::PageIndex>> pages;
    for (int s = 0; s < 3; ++s) {
      prompts.push_back(test::random_tokens(5 + 9 * s, vocab, 70 + std::uint32_t(s)));
      pages.push_back(
          {static_cast<cache::PageIndex>(2 * s), static_cast<cache::PageIndex>(2 * s + 1)});
    }
    const auto batch_of = [&](std::span<const engine::ForwardPass::CandidateRequest> requests) {
      std::vector<engine::ForwardPass::Sequence> batch;
      for (std::size_t s = 0; s < prompts.size(); ++s)
        batch.push_back({pages[s], prompts[s], 0, false, requests[s]});
      return batch;
    };

    engine::ModelRuntime plain(model.description(), cpu, options());
    const std::vector<engine::ForwardPass::CandidateRequest> none(3);
    const engine::ForwardPass::Result rows = plain.forward().run(batch_of(none));

    const std::vector<std::int32_t> gather0{0, 5, 699}, gather2{42};
    std::vector<engine::ForwardPass::CandidateRequest> requests(3);
    requests[0] = {40, 1.0f, gather0};
    requests[2] = {7, 2.5f, gather2};
    engine::ModelRuntime runtime(model.description(), cpu, options());
    const engine::ForwardPass::Result result = runtime.forward().run(batch_of(requests));

    // The sequence without a request: its row, as before.
    QVERIFY(same_bits(result.row(1), rows.row(1)));
    QVERIFY_THROWS_EXCEPTION(std::out_of_range, result.row(0));
    QVERIFY_THROWS_EXCEPTION(std::out_of_range, result.row(2));
    QVERIFY(result.candidates[1].values.empty());

    // The largest k asked for, for every sequence that asked.
    for (const std::size_t s : {std::size_t{0}, std::size_t{2}}) {
      const std::span<const float> row = rows.row(s);
      const float inv_temperature = requests[s].inv_temperature;
      std::vector<float> values(40);
      std::vector<std::int32_t> ids(40);
      kernels::TopLogitsStats stats;
      kernels::top_logits_host(row.data(), 1, vocab, 40, &inv_temperature, values.data(),
                               ids.data(), &stats);
      const engine::ForwardPass::RowCandidates& got = result.candidates[s];
      QVERIFY(same_bits(got.values, values));
      QCOMPARE(got.ids, ids);
      QCOMPARE(got.stats.finite, stats.finite);
      QCOMPARE(got.stats.nans, stats.nans);
      QCOMPARE(got.stats.tail_sum, stats.tail_sum);
      QCOMPARE(got.gathered.size(), requests[s].gather.size());
      for (std::size_t g = 0; g < got.gathered.size(); ++g)
        QCOMPARE(got.gathered[g], row[std::size_t(requests[s].gather[g])]);

      std::vector<float> fetched;
      runtime.forward().fetch_row(result, s, fetched);
      QVERIFY(same_bits(fetched, row));
    }

    // A gathered id outside the vocabulary is refused.
    const std::vector<std::int32_t> outside{vocab};
    requests[1] = {3, 1.0f, outside};
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, runtime.forward().run(batch_of(requests)));
  }
};

QUIRE_TEST(LogitCandidatesTest)
#include "test_logit_candidates.moc"
