// Logits with each quantized cache format against the FP16 cache, with a
// bound per format. The model's K/V are random Gaussians with norms near one,
// so the errors measure the codings themselves.

#include <QTest>

#include "quire/cache/cache_format.h"
#include "runtime_test_support.h"
#include "test_main.h"

using namespace quire;
using quire::test::TestModel;

Q_DECLARE_METATYPE(cache::CacheFormat)

class CacheFormatLogitsTest : public QObject {
  Q_OBJECT

  std::unique_ptr<TestModel> model_;
  std::vector<float> reference_;
  std::vector<cache::TokenId> tokens_;

  std::vector<float> run(cache::CacheFormat format) {
    kernels::CpuBackend backend;
    engine::RuntimeOptions options;
    options.cache_format = format;
    options.cache_tokens = 512;
    options.page_size = 32;
    options.max_chunk_tokens = 64;
    engine::ModelRuntime runtime(model_->description(), backend, options);
    return runtime.prefill(tokens_, false).back();
  }

 private slots:
  void initTestCase() {
    engine::modelgen::RandomModelSpec spec;
    spec.architecture = "llama";
    spec.layers = 3;
    spec.hidden = 256;
    spec.heads = 4;
    spec.kv_heads = 2;
    spec.intermediate = 512;
    spec.seed = 5;
    model_ = std::make_unique<TestModel>(spec);
    tokens_ = test::random_tokens(200, 512, 9);
    reference_ = run(cache::CacheFormat::FP16);
  }

  void quantizedCachesStayCloseToFp16_data() {
    QTest::addColumn<cache::CacheFormat>("format");
    QTest::addColumn<double>("bound");
    // Largest logit difference allowed, relative to the largest FP16 logit:
    // about three times what these codings give on this model (Q8 6e-4,
    // FP8 3.4e-3, Q6 9.8e-3, Q4 1.2e-2; Q6 is close to Q4 because 4-bit
    // values dominate its error).
    QTest::newRow("q8") << cache::CacheFormat::Q8 << 0.002;
    QTest::newRow("fp8") << cache::CacheFormat::FP8 << 0.012;
    QTest::newRow("q6") << cache::CacheFormat::Q6 << 0.03;
    QTest::newRow("q4") << cache::CacheFormat::Q4 << 0.04;
  }

  void quantizedCachesStayCloseToFp16() {
    QFETCH(cache::CacheFormat, format);
    QFETCH(double, bound);
    const std::vector<float> logits = run(format);
    const double scale = test::max_abs(reference_);
    const double difference = test::max_abs_difference(logits, reference_) / scale;
    qInfo("%s: largest difference %.5f of the largest logit",
          cache::format_info(format).name.data(), difference);
    QVERIFY2(difference < bound, qPrintable(QString::number(difference)));
    QVERIFY(difference > 0.0);  // the format really changed something
  }

  void coarserFormatsErrMore() {
    const double q8 = test::max_abs_difference(run(cache::CacheFormat::Q8), reference_);
    const double q4 = test::max_abs_difference(run(cache::CacheFormat::Q4), reference_);
    QVERIFY(q8 < q4);
  }
};

QUIRE_TEST(CacheFormatLogitsTest)
#include "test_cache_formats.moc"
