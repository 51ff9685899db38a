// A second request that extends the first computes only its new tokens, and
// gets the logits a fresh computation of the whole prompt gives.

#include <QTest>

#include "runtime_test_support.h"
#include "test_main.h"

using namespace quire;
using quire::test::TestModel;

Q_DECLARE_METATYPE(cache::CacheFormat)

class PrefixReuseTest : public QObject {
  Q_OBJECT

  std::unique_ptr<TestModel> model_;

  engine::RuntimeOptions options(cache::CacheFormat format) const {
    engine::RuntimeOptions o;
    o.cache_format = format;
    o.cache_tokens = 1024;
    o.page_size = 16;
    o.max_chunk_tokens = 48;
    return o;
  }

 private slots:
  void initTestCase() {
    engine::modelgen::RandomModelSpec spec;
    spec.architecture = "qwen2";
    spec.seed = 3;
    model_ = std::make_unique<TestModel>(spec);
  }

  void extendingAPromptComputesOnlyTheNewTokens_data() {
    QTest::addColumn<cache::CacheFormat>("format");
    for (const cache::CacheFormat format : cache::all_cache_formats()) {
      QTest::newRow(cache::format_info(format).name.data()) << format;
    }
  }

  void extendingAPromptComputesOnlyTheNewTokens() {
    QFETCH(cache::CacheFormat, format);
    const std::vector<cache::TokenId> turn1 = test::random_tokens(150, 512, 1);
    std::vector<cache::TokenId> turn2 = turn1;
    for (cache::TokenId t : test::random_tokens(37, 512, 2))
      turn2.push_back(t);

    kernels::CpuBackend backend;
    engine::ModelRuntime runtime(model_->description(), backend, options(format));
    runtime.prefill(turn1, false);
    const cache::CacheStats before = runtime.cache().stats();
    const std::vector<float> reused = runtime.prefill(turn2, false).back();
    const cache::CacheStats after = runtime.cache().stats();
    // 150 tokens: 9 full pages shared, the partial tenth copied (6 tokens).
    QCOMPARE(after.reused_tokens - before.reused_tokens, std::int64_t(144));
    QCOMPARE(after.copied_tokens - before.copied_tokens, std::int64_t(6));
    QCOMPARE(after.computed_tokens - before.computed_tokens, std::int64_t(37));

    engine::ModelRuntime fresh(model_->description(), backend, options(format));
    const std::vector<float> computed = fresh.prefill(turn2, false).back();
    const float difference = test::max_abs_difference(reused, computed);
    QVERIFY2(difference <= 1e-4f * test::max_abs(computed),
             qPrintable(QString::number(difference)));
  }
};

QUIRE_TEST(PrefixReuseTest)
#include "test_prefix_reuse.moc"
