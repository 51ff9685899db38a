// How a mixture of experts runs on the CPU backend: a decode step reads only
// the experts its token chose, and a prefill runs each expert once over all
// the tokens routed to it (every token to exactly experts_per_token experts).

#include <QTest>

#include "forwarding_backend.h"
#include "runtime_test_support.h"
#include "test_main.h"

using namespace quire;
using quire::test::TestModel;

namespace {

// Counts the rows each expert run gathers.
class CountingBackend final : public test::ForwardingBackend {
 public:
  using ForwardingBackend::ForwardingBackend;
  std::string name() const override { return "counting"; }
  bool shares_host_memory() const override { return true; }

  std::vector<std::int64_t> gathered;  // rows per expert run, in order

  void gather_rows(int device, const float* x, std::int64_t cols, const std::int32_t* rows,
                   std::int64_t count, float* out) override {
    gathered.push_back(count);
    ForwardingBackend::gather_rows(device, x, cols, rows, count, out);
  }
};

engine::RuntimeOptions options() {
  engine::RuntimeOptions o;
  o.cache_tokens = 512;
  o.page_size = 16;
  o.max_chunk_tokens = 64;
  return o;
}

}  // namespace

class ExpertRoutingTest : public QObject {
  Q_OBJECT

  std::unique_ptr<TestModel> model_;
  static constexpr int kExperts = 8;
  static constexpr int kPerToken = 3;
  static constexpr int kSparseLayers = 2;  // of three, one dense

 private slots:
  void initTestCase() {
    engine::modelgen::RandomModelSpec spec = engine::modelgen::default_spec("qwen3_moe");
    spec.seed = 5;
    spec.layers = 3;
    spec.moe.experts = kExperts;
    spec.moe.experts_per_token = kPerToken;
    spec.moe.mlp_only_layers = {1};
    model_ = std::make_unique<TestModel>(spec);
    QCOMPARE(model_->description()->config.moe.sparse_layers,
             std::vector<bool>({true, false, true}));
  }

  void prefillRunsEachExpertOnceOverItsTokens() {
    kernels::CpuBackend cpu;
    CountingBackend backend(cpu);
    engine::ModelRuntime runtime(model_->description(), backend, options());
    backend.gathered.clear();
    runtime.prefill(test::random_tokens(40, 512, 3), false);
    // One chunk of 40 tokens: per sparse layer at most one run per expert,
    // and 40 x 3 routed rows in all.
    QVERIFY(backend.gathered.size() <= std::size_t(kSparseLayers * kExperts));
    std::int64_t rows = 0;
    for (const std::int64_t count : backend.gathered) {
      QVERIFY(count >= 1);
      rows += count;
    }
    QCOMPARE(rows, std::int64_t(kSparseLayers * 40 * kPerToken));
    // With 120 routes over 8 experts per layer, most experts run -- each once.
    QVERIFY(backend.gathered.size() > std::size_t(kSparseLayers * kExperts / 2));
  }

  void decodeReadsOnlyTheChosenExperts() {
    kernels::CpuBackend cpu;
    CountingBackend backend(cpu);
    engine::ModelRuntime runtime(model_->description(), backend, options());
    std::vector<cache::TokenId> prompt = test::random_tokens(32, 512, 4);
    runtime.prefill(prompt, false);
    prompt.push_back(77);
    backend.gathered.clear();
    runtime.prefill(prompt, false);  // two cached pages: one new token
    QCOMPARE(runtime.cache().stats().computed_tokens, std::int64_t(32 + 1));
    // Three experts of eight per sparse layer, one row each.
    QCOMPARE(backend.gathered, std::vector<std::int64_t>(kSparseLayers * kPerToken, 1));
  }
};

QUIRE_TEST(ExpertRoutingTest)
#include "test_expert_routing.moc"
