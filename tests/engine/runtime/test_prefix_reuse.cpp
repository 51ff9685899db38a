// A second request that extends the first computes only its new tokens, and
// gets the logits a fresh computation of the whole prompt gives: in every
// cache format, and in every family -- sliding windows shorter than a page
// and not dividing it (pages of 16 tokens here), Gemma's alternating and
// patterned windows, Phi-3's fused projections, mixtures of experts, and
// EXL3 weights (whose fresh logits test_golden_logits checks against the
// reference decoder).

#include <QTest>
#include <map>

#include "runtime_test_support.h"
#include "test_main.h"

using namespace quire;
using quire::test::TestModel;

Q_DECLARE_METATYPE(cache::CacheFormat)

namespace {

engine::modelgen::RandomModelSpec family(const std::string& name) {
  engine::modelgen::RandomModelSpec spec;
  spec.seed = 3;
  if (name == "qwen2") {
    spec.architecture = "qwen2";
  } else if (name == "mistral window 5") {
    spec.architecture = "mistral";
    spec.sliding_window = 5;
  } else if (name == "qwen3 window 23") {
    spec.architecture = "qwen3";
    spec.sliding_window = 23;
  } else if (name == "gemma2 window 7") {
    spec.architecture = "gemma2";
    spec.sliding_window = 7;
    spec.layers = 3;
  } else if (name == "gemma3 window 11") {
    spec.architecture = "gemma3";
    spec.sliding_window = 11;
    spec.layers = 3;
    spec.sliding_window_pattern = 3;
  } else if (name == "phi3 window 40") {
    spec.architecture = "phi3";
    spec.sliding_window = 40;
    spec.partial_rotary_factor = 0.5;
  } else if (name == "mixtral") {
    spec.architecture = "mixtral";
  } else if (name == "qwen3_moe") {
    spec.architecture = "qwen3_moe";
    spec.layers = 3;
    spec.moe.mlp_only_layers = {1};
  } else if (name == "llama exl3") {
    spec.format.kind = engine::modelgen::WeightFormat::EXL3;
  } else if (name == "qwen3_moe exl3 3inst") {
    spec.architecture = "qwen3_moe";
    spec.format.kind = engine::modelgen::WeightFormat::EXL3;
    spec.format.exl3_bits = 3.5;
    spec.format.exl3_codebook = kernels::Exl3Codebook::three_inst;
  }
  return spec;
}

const char* const kFamilies[] = {"qwen2",
                                 "mistral window 5",
                                 "qwen3 window 23",
                                 "gemma2 window 7",
                                 "gemma3 window 11",
                                 "phi3 window 40",
                                 "mixtral",
                                 "qwen3_moe",
                                 "llama exl3",
                                 "qwen3_moe exl3 3inst"};

engine::RuntimeOptions options(cache::CacheFormat format) {
  engine::RuntimeOptions o;
  o.cache_format = format;
  o.cache_tokens = 1024;
  o.page_size = 16;
  o.max_chunk_tokens = 48;
  return o;
}

// Turn two reuses turn one's pages and computes only its own tokens; its
// logits match a fresh run's.
void check_reuse(const std::shared_ptr<const engine::ModelDescription>& model,
                 cache::CacheFormat format, std::int64_t shared_pages) {
  const std::vector<cache::TokenId> turn1 = test::random_tokens(150, 512, 1);
  std::vector<cache::TokenId> turn2 = turn1;
  for (cache::TokenId t : test::random_tokens(37, 512, 2))
    turn2.push_back(t);

  kernels::CpuBackend backend;
  engine::ModelRuntime runtime(model, backend, options(format));
  runtime.prefill(turn1, false);
  const cache::CacheStats before = runtime.cache().stats();
  const std::vector<float> reused = runtime.prefill(turn2, false).back();
  const cache::CacheStats after = runtime.cache().stats();
  // 150 tokens: 9 full pages shared, the partial tenth copied (6 tokens).
  QCOMPARE(after.reused_tokens - before.reused_tokens, shared_pages * 16);
  QCOMPARE(after.copied_tokens - before.copied_tokens, std::int64_t(6));
  QCOMPARE(after.computed_tokens - before.computed_tokens, std::int64_t(37));

  engine::ModelRuntime fresh(model, backend, options(format));
  const std::vector<float> computed = fresh.prefill(turn2, false).back();
  const float difference = test::max_abs_difference(reused, computed);
  QVERIFY2(difference <= 1e-4f * test::max_abs(computed), qPrintable(QString::number(difference)));
}

}  // namespace

class PrefixReuseTest : public QObject {
  Q_OBJECT

  std::map<std::string, std::unique_ptr<TestModel>> models_;

  std::shared_ptr<const engine::ModelDescription> model(const std::string& name) {
    auto& slot = models_[name];
    if (!slot) slot = std::make_unique<TestModel>(family(name));
    return slot->description();
  }

 private slots:
  void extendingAPromptComputesOnlyTheNewTokens_data() {
    QTest::addColumn<cache::CacheFormat>("format");
    for (const cache::CacheFormat format : cache::all_cache_formats()) {
      QTest::newRow(cache::format_info(format).name.data()) << format;
    }
  }

  void extendingAPromptComputesOnlyTheNewTokens() {
    QFETCH(cache::CacheFormat, format);
    check_reuse(model("qwen2"), format, 9);
  }

  void everyFamilyReusesItsPagesExactly_data() {
    QTest::addColumn<QString>("family");
    for (const char* name : kFamilies)
      QTest::newRow(name) << QString::fromLatin1(name);
  }

  void everyFamilyReusesItsPagesExactly() {
    QFETCH(QString, family);
    check_reuse(model(family.toStdString()), cache::CacheFormat::FP16, 9);
  }

  // When every layer slides, a prompt longer than the whole cache still runs:
  // pages behind the window go back as the prefill passes them. Window 5, steps
  // of 16: a sequence holds at most 3 pages of 16, the cache has 4.
  void aSlidingWindowPromptLongerThanTheCacheRuns() {
    const auto mistral = model("mistral window 5");
    const std::vector<cache::TokenId> prompt = test::random_tokens(150, 512, 5);
    kernels::CpuBackend backend;
    engine::RuntimeOptions small = options(cache::CacheFormat::FP16);
    small.cache_tokens = 64;
    small.max_chunk_tokens = 16;
    engine::ModelRuntime runtime(mistral, backend, small);
    QCOMPARE(runtime.cache().num_pages(), 4);
    QCOMPARE(runtime.cache().config().window, 5);
    const std::vector<float> bounded = runtime.prefill(prompt, false).back();
    QVERIFY(runtime.cache().check_invariants().empty());

    engine::ModelRuntime roomy(mistral, backend, options(cache::CacheFormat::FP16));
    const std::vector<float> full = roomy.prefill(prompt, false).back();
    const float difference = test::max_abs_difference(bounded, full);
    QVERIFY2(difference <= 1e-4f * test::max_abs(full), qPrintable(QString::number(difference)));
  }

  // Gemma 2 and 3 shapes, windows of 7 and 11 (less than a page of 16, not
  // dividing it): the sliding layers' pages come from a window pool that one
  // sequence of steps of 16 fills (6 + 16 or 10 + 16 positions: 3 pages), so
  // a 150-token prompt runs with 3 pages for them instead of 11, and its
  // logits are those of a roomy cache, where the pool is as large as the
  // main one. A second turn then reuses its prefix from both pools (the
  // eleventh main page takes the copy of the partial tenth).
  void mixedModelsKeepOnlyTheWindowForTheirSlidingLayers_data() {
    QTest::addColumn<QString>("family");
    QTest::newRow("gemma2") << QStringLiteral("gemma2 window 7");
    QTest::newRow("gemma3") << QStringLiteral("gemma3 window 11");
  }

  void mixedModelsKeepOnlyTheWindowForTheirSlidingLayers() {
    QFETCH(QString, family);
    const auto gemma = model(family.toStdString());
    const std::vector<cache::TokenId> prompt = test::random_tokens(150, 512, 5);
    kernels::CpuBackend backend;
    engine::RuntimeOptions tight = options(cache::CacheFormat::FP16);
    tight.cache_tokens = 176;
    tight.max_chunk_tokens = 16;
    tight.max_sequences = 1;
    engine::ModelRuntime runtime(gemma, backend, tight);
    QCOMPARE(runtime.cache().num_pages(), 11);
    QVERIFY(runtime.cache().window_pool());
    QCOMPARE(runtime.cache().window_pool()->num_pages(), 3);
    QCOMPARE(runtime.plan().window_pool_pages, std::int64_t(3));
    const std::vector<int>& windows = gemma->config.sliding_windows;
    for (std::size_t layer = 0; layer < windows.size(); ++layer) {
      QCOMPARE(runtime.storage().windowed(layer), windows[layer] > 0);
      QCOMPARE(runtime.storage().view(layer).layout.num_pages, windows[layer] > 0 ? 3 : 11);
      QCOMPARE(runtime.plan().modules[layer + 1].cache_bytes,
               runtime.storage().page_bytes(layer) * (windows[layer] > 0 ? 3 : 11));
    }
    const std::vector<float> bounded = runtime.prefill(prompt, false).back();
    QVERIFY(runtime.cache().check_invariants().empty());

    engine::ModelRuntime roomy(gemma, backend, options(cache::CacheFormat::FP16));
    QCOMPARE(roomy.cache().window_pool()->num_pages(), roomy.cache().num_pages());
    const std::vector<float> full = roomy.prefill(prompt, false).back();
    const float difference = test::max_abs_difference(bounded, full);
    QVERIFY2(difference <= 1e-4f * test::max_abs(full), qPrintable(QString::number(difference)));

    // The next turn: 144 tokens (9 pages) found in both pools, 6 more copied
    // from the partial page, 4 new ones computed.
    std::vector<cache::TokenId> next = prompt;
    for (const cache::TokenId token : test::random_tokens(4, 512, 6))
      next.push_back(token);
    const cache::CacheStats before = runtime.cache().stats();
    const std::vector<float> reused = runtime.prefill(next, false).back();
    const cache::CacheStats after = runtime.cache().stats();
    QCOMPARE(after.computed_tokens - before.computed_tokens, std::int64_t(4));
    QCOMPARE(after.copied_tokens - before.copied_tokens, std::int64_t(6));
    engine::ModelRuntime fresh(gemma, backend, options(cache::CacheFormat::FP16));
    const std::vector<float> computed = fresh.prefill(next, false).back();
    const float reuse_difference = test::max_abs_difference(reused, computed);
    QVERIFY2(reuse_difference <= 1e-4f * test::max_abs(computed),
             qPrintable(QString::number(reuse_difference)));
  }

  // A turn whose window pages another conversation evicted from the window
  // pool computes its prefix again, although the main pool still holds it,
  // and gets a fresh run's logits.
  void aMixedPrefixWithoutItsWindowIsComputedAgain() {
    const auto gemma = model("gemma2 window 7");
    const std::vector<cache::TokenId> first = test::random_tokens(150, 512, 5);
    kernels::CpuBackend backend;
    engine::RuntimeOptions tight = options(cache::CacheFormat::FP16);
    tight.cache_tokens = 320;
    tight.max_chunk_tokens = 16;
    tight.max_sequences = 1;
    engine::ModelRuntime runtime(gemma, backend, tight);
    QCOMPARE(runtime.cache().window_pool()->num_pages(), 3);
    runtime.prefill(first, false);
    runtime.prefill(test::random_tokens(128, 512, 9), false);
    std::vector<cache::TokenId> next = first;
    for (const cache::TokenId token : test::random_tokens(4, 512, 6))
      next.push_back(token);
    const cache::CacheStats before = runtime.cache().stats();
    const std::vector<float> recomputed = runtime.prefill(next, false).back();
    const cache::CacheStats after = runtime.cache().stats();
    QCOMPARE(after.computed_tokens - before.computed_tokens, std::int64_t(154));
    QVERIFY(runtime.cache().check_invariants().empty());
    engine::ModelRuntime fresh(gemma, backend, options(cache::CacheFormat::FP16));
    const std::vector<float> computed = fresh.prefill(next, false).back();
    const float difference = test::max_abs_difference(recomputed, computed);
    QVERIFY2(difference <= 1e-4f * test::max_abs(computed),
             qPrintable(QString::number(difference)));
  }
};

QUIRE_TEST(PrefixReuseTest)
#include "test_prefix_reuse.moc"
