// Logits with each quantized cache format against the FP16 cache, with a
// bound per format. The model's K/V are random Gaussians with norms near one,
// so the errors measure the codings themselves.

#include <QTest>
#include <algorithm>

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
    return test::last_prefill_logits(model_->description(), test::small_cache_options(format),
                                     tokens_);
  }

 private slots:
  void initTestCase() {
    model_ = std::make_unique<TestModel>(test::small_llama_spec());
    tokens_ = test::random_tokens(200, 512, 9);
    reference_ = run(cache::CacheFormat::FP16);
  }

  // Largest logit difference allowed, relative to the largest FP16 logit,
  // for a cache whose coarser half is this coding: about three times what
  // the coding gives on this model in both halves (Q8 6e-4, FP8 3.4e-3, Q4
  // 1.2e-2; Q6 gives 9.8e-3, close to Q4, because its 4-bit values dominate).
  static double bound_of(cache::ElementCoding coding) {
    switch (coding) {
      case cache::ElementCoding::FP16:
        return 0.0;
      case cache::ElementCoding::Q8:
        return 0.002;
      case cache::ElementCoding::FP8:
        return 0.012;
      case cache::ElementCoding::Q4:
        return 0.04;
    }
    return 0.0;
  }

  // Every pair of key and value codings but FP16 itself.
  void quantizedCachesStayCloseToFp16_data() {
    QTest::addColumn<cache::CacheFormat>("format");
    QTest::addColumn<double>("bound");
    for (const cache::CacheFormat format : cache::all_cache_format_pairs()) {
      if (format == cache::CacheFormat::FP16) continue;
      QTest::newRow(cache::format_info(format).name.data())
          << format << std::max(bound_of(format.key), bound_of(format.value));
    }
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

  // Coding only one half coarsely costs less than coding both: each half
  // carries its own error, so the choice of the other one matters.
  void eachHalfCarriesItsOwnError() {
    const double q4 = test::max_abs_difference(run(cache::CacheFormat::Q4), reference_);
    const cache::CacheFormat fp16_keys{cache::ElementCoding::FP16, cache::ElementCoding::Q4};
    const cache::CacheFormat fp16_values{cache::ElementCoding::Q4, cache::ElementCoding::FP16};
    const double only_values = test::max_abs_difference(run(fp16_keys), reference_);
    const double only_keys = test::max_abs_difference(run(fp16_values), reference_);
    QVERIFY2(only_values > 0.0 && only_values < q4,
             qPrintable(QStringLiteral("%1 vs %2").arg(only_values).arg(q4)));
    QVERIFY2(only_keys > 0.0 && only_keys < q4,
             qPrintable(QStringLiteral("%1 vs %2").arg(only_keys).arg(q4)));
    // "k8v4" is Q6 by another name: the very same cache.
    QCOMPARE(run(*cache::parse_cache_format("k8v4")), run(cache::CacheFormat::Q6));
  }

  void coarserFormatsErrMore() {
    const double q8 = test::max_abs_difference(run(cache::CacheFormat::Q8), reference_);
    const double q4 = test::max_abs_difference(run(cache::CacheFormat::Q4), reference_);
    QVERIFY(q8 < q4);
  }
};

QUIRE_TEST(CacheFormatLogitsTest)
#include "test_cache_formats.moc"
