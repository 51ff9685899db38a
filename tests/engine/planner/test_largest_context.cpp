#include <QTest>
#include <limits>
#include <stdexcept>

#include "planner_test_helpers.h"
#include "quire/cache/cache_format.h"
#include "test_main.h"

using namespace quire::engine;
using namespace quire::engine::testing;

Q_DECLARE_METATYPE(PlacementMode)

namespace {

// Llama-3-8B: vocabulary 128256, hidden 4096, 32 layers, 8 KV heads of 128,
// MLP 14336. Layers at 4.0 bits per weight, FP16 embedding and norms, a
// 6-bit head.
constexpr std::int64_t kEmbedding = 128256LL * 4096 * 2;  // 1,050,673,152
constexpr std::int64_t kLayerLinear =
    (4096LL * 4096 * 2 + 4096LL * 1024 * 2 + 3 * 4096LL * 14336) * 4 / 8;  // 109,051,904
constexpr std::int64_t kLayer = kLayerLinear + 2 * 4096 * 2;               // 109,068,288
constexpr std::int64_t kHead = 128256LL * 4096 * 6 / 8 + 4096 * 2;         // 394,010,624
constexpr std::int64_t kLogits = 128256LL * 4 * 16;                        // 16 FP32 rows

PlacementRequest llama3_8b(quire::cache::CacheFormat format, std::int64_t tokens) {
  const std::int64_t per_page = quire::cache::format_info(format).page_bytes({8, 128}, 256).total();
  PlacementRequest request;
  request.modules = simple_model(32, kEmbedding, kLayer, per_page, kHead, kLogits);
  request.device_scratch_bytes = 256 * MiB;
  request.context_tokens = tokens;
  request.page_size = 256;
  // A 24 GiB card driving the desktop (512 MiB in use) and a 12 GiB one.
  request.devices = {device(0, "24 GiB card", 24 * GiB - 512 * MiB, 24 * GiB),
                     device(1, "12 GiB card", 12 * GiB - 256 * MiB, 12 * GiB)};
  request.policy.default_reserve_bytes = 256 * MiB;
  return request;
}

}  // namespace

class LargestContextTest : public QObject {
  Q_OBJECT

 private slots:
  void fp16PageIsOneMibPerLayer() {
    // 4 KiB per token per layer: 128 KiB per token over 32 layers.
    QCOMPARE(quire::cache::format_info(quire::cache::CacheFormat::FP16)
                 .page_bytes({8, 128}, 256)
                 .total(),
             MiB);
  }

  // Memory would hold 920 pages (235,520 tokens, above), but Llama 3 reads
  // 8,192 positions: that is the largest context, and the plan says why.
  void cappedAtTheModelsLimit() {
    PlacementRequest request = llama3_8b(quire::cache::CacheFormat::FP16, 8192);
    request.model_context_tokens = 8192;
    const PlacementPlan plan = plan_placement(request);
    QVERIFY(plan.largest_context);
    QCOMPARE(plan.largest_context->tokens, std::int64_t(8192));
    QCOMPARE(plan.largest_context->pages, std::int64_t(32));
    QVERIFY(plan.largest_context->model_limit);

    // A limit above what memory holds changes nothing.
    request.model_context_tokens = 1 << 20;
    const PlacementPlan memory_bound = plan_placement(request);
    QCOMPARE(memory_bound.largest_context->tokens, std::int64_t(235520));
    QVERIFY(!memory_bound.largest_context->model_limit);

    request.model_context_tokens = -1;
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, plan_placement(request));
  }

  // Every layer sliding over 4,096 positions (Mistral 7B v0.1), steps of 256:
  // a conversation holds at most (4095 + 256) / 256 rounded up + 1 = 18 pages,
  // and memory holds 920, so any context up to the model's limit fits.
  void aSlidingWindowIsPricedAtTheWindow() {
    PlacementRequest request = llama3_8b(quire::cache::CacheFormat::FP16, 8192);
    request.model_context_tokens = 1 << 20;
    request.window_pages = 18;
    const PlacementPlan plan = plan_placement(request);
    QVERIFY(plan.largest_context);
    QCOMPARE(plan.largest_context->tokens, std::int64_t(1) << 20);
    QCOMPARE(plan.largest_context->pages, std::int64_t(920));
    QVERIFY(plan.largest_context->model_limit);
    QVERIFY(plan.largest_context->window_bounded);

    // A window that needs more pages than memory holds prices like no window.
    request.window_pages = 921;
    const PlacementPlan wide = plan_placement(request);
    QCOMPARE(wide.largest_context->tokens, std::int64_t(235520));
    QVERIFY(!wide.largest_context->window_bounded);

    request.window_pages = -1;
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, plan_placement(request));
  }

  // A mixed model (Gemma 2's alternation) on one device: model A's layers 0
  // and 2 slide, and their window pool holds at most 6 pages. Usable 1564
  // MiB less 1164 MiB of weights and scratch leaves 400 MiB of cache. One
  // pool: 4 layers x 10 MiB = 40 MiB a page, 10 pages. Two pools: from 6
  // pages on, 20 MiB a page plus 2 x 10 MiB x 6 = 120 MiB, so 14 pages.
  void aWindowPoolIsPricedAtItsSize() {
    PlacementRequest request = model_a(4 * 256);
    request.devices = {device(0, "A", 1600 * MiB, 2048 * MiB)};
    const PlacementPlan one_pool = plan_placement(request);
    QCOMPARE(one_pool.largest_context->pages, std::int64_t(10));
    QCOMPARE(one_pool.window_pool_pages, std::int64_t(0));

    request.modules[1].in_window_pool = true;
    request.modules[3].in_window_pool = true;
    request.window_pool_pages = 6;
    const PlacementPlan short_context = plan_placement(request);
    QVERIFY(short_context.fits);
    // Fewer pages than the pool's size: the pool holds as many as the context.
    QCOMPARE(short_context.window_pool_pages, std::int64_t(4));
    QCOMPARE(short_context.modules[1].cache_bytes, 40 * MiB);
    QCOMPARE(short_context.modules[2].cache_bytes, 40 * MiB);
    QCOMPARE(short_context.largest_context->pages, std::int64_t(14));
    QCOMPARE(short_context.largest_context->tokens, std::int64_t(14 * 256));

    request.context_tokens = 14 * 256;
    const PlacementPlan largest = plan_placement(request);
    QVERIFY(largest.fits);
    QCOMPARE(largest.window_pool_pages, std::int64_t(6));
    QCOMPARE(largest.modules[1].cache_bytes, 60 * MiB);
    QCOMPARE(largest.modules[2].cache_bytes, 140 * MiB);
    QCOMPARE(largest.devices[0].cache, 400 * MiB);
    request.context_tokens = 15 * 256;
    QVERIFY(!plan_placement(request).fits);

    request.window_pool_pages = -1;
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, plan_placement(request));
  }

  // Hand arithmetic. Usable: C0 = 24 GiB - 512 MiB - 256 MiB = 24,964,497,408
  // and C1 = 12 GiB - 256 MiB - 256 MiB = 12,348,030,976. With n layers on
  // device 0 and P pages, a layer costs L + P MiB (L = 109,068,288) and
  //   device 0: 256 MiB + E + n (L + P MiB) <= C0, so n (L + P MiB) <= 23,645,388,800
  //   device 1: 256 MiB + H + logits + (32 - n)(L + P MiB) <= C1, so
  //             (32 - n)(L + P MiB) <= 11,677,376,512.
  // n = 22: device 0 allows L + P MiB <= 1,074,790,400, P <= 920.99; device 1
  //         (10 layers) allows P <= 1009. So 920 pages.
  // n = 21: device 1 (11 layers) allows P <= 908. n = 23: device 0 allows P <= 876.
  // Largest context: 920 pages = 235,520 tokens.
  void llama3On24And12Gib() {
    const PlacementRequest request = llama3_8b(quire::cache::CacheFormat::FP16, 8192);
    const PlacementPlan plan = plan_placement(request);
    QVERIFY(plan.fits);
    QVERIFY(plan.largest_context);
    QCOMPARE(plan.largest_context->pages, std::int64_t(920));
    QCOMPARE(plan.largest_context->tokens, std::int64_t(235520));

    const PlacementPlan at_limit =
        plan_placement(llama3_8b(quire::cache::CacheFormat::FP16, 235520));
    QVERIFY(at_limit.fits);
    QCOMPARE(at_limit.devices[0].module_count, 23);  // embedding + 22 layers
    QCOMPARE(at_limit.devices[1].module_count, 11);  // 10 layers + head
    QCOMPARE(at_limit.devices[0].cache, 22 * 920 * MiB);
    QCOMPARE(at_limit.devices[1].cache, 10 * 920 * MiB);
    QCOMPARE(at_limit.devices[0].planned, std::int64_t(24'941'789'184));
    QCOMPARE(at_limit.devices[1].planned, std::int64_t(11'408'236'544));
    QVERIFY(!fits_with(request, 235520 + 256));
    // Any token count inside the last page rounds up to it and still fits.
    QVERIFY(fits_with(request, 235520 - 255));
  }

  // 256k tokens (1024 pages, layers of 1,182,810,112 bytes): device 0 takes
  // the embedding and 19 layers; device 1 would need 256 MiB + 13 layers +
  // head + logits = 16,047,185,920 bytes = 15303.9 MiB against its 11776 MiB.
  void llama3At256kSaysWhatFits() {
    const PlacementPlan plan = plan_placement(llama3_8b(quire::cache::CacheFormat::FP16, 262144));
    QVERIFY(!plan.fits);
    QCOMPARE(plan.shortfall->needed, std::int64_t(16'047'185'920));
    QCOMPARE(plan.problem,
             std::string("does not fit: needs 15304 MiB on device 1 (12 GiB card), has 11776 MiB "
                         "free after the 256 MiB reserve — lower the context to 235520 tokens, "
                         "use a smaller cache format, or add a device"));
  }

  // A Q4 cache (294,912 bytes per page per layer) gives more context; check the
  // answer by its defining property rather than by hand.
  void llama3WithQ4Cache() {
    const PlacementRequest request = llama3_8b(quire::cache::CacheFormat::Q4, 8192);
    const PlacementPlan plan = plan_placement(request);
    QVERIFY(plan.fits && plan.largest_context);
    QVERIFY(plan.largest_context->pages > 920 * 3);
    QVERIFY(fits_with(request, plan.largest_context->tokens));
    QVERIFY(!fits_with(request, plan.largest_context->tokens + 256));
  }

  // The defining property across modes and device sets: the largest context
  // fits, one more page does not.
  void largestIsExact_data() {
    QTest::addColumn<PlacementMode>("mode");
    QTest::addColumn<QList<qint64>>("freeMib");
    QTest::addColumn<int>("pageSize");
    const QList<QList<qint64>> device_sets{{1000, 1000}, {3000, 700}, {700, 3000, 250}, {5000}};
    const QList<PlacementMode> modes{PlacementMode::FillInOrder, PlacementMode::Balanced,
                                     PlacementMode::Manual};
    for (const PlacementMode mode : modes) {
      for (int i = 0; i < device_sets.size(); ++i) {
        for (const int page_size : {256, 64}) {
          const QByteArray name = QByteArray(to_string(mode)) + " set " + QByteArray::number(i) +
                                  " page " + QByteArray::number(page_size);
          QTest::newRow(name.constData()) << mode << device_sets[i] << page_size;
        }
      }
    }
  }

  void largestIsExact() {
    QFETCH(PlacementMode, mode);
    QFETCH(QList<qint64>, freeMib);
    QFETCH(int, pageSize);
    PlacementRequest request;
    request.modules =
        simple_model(12, 150 * MiB, 90 * MiB + 12345, 3 * MiB + 77, 120 * MiB, 40 * MiB);
    request.device_scratch_bytes = 48 * MiB;
    request.page_size = pageSize;
    for (int i = 0; i < freeMib.size(); ++i) {
      request.devices.push_back(device(i, "D", freeMib[i] * MiB));
      request.policy.manual_limit_bytes.push_back(freeMib[i] * MiB * 3 / 4);
    }
    request.policy.mode = mode;
    request.policy.default_reserve_bytes = 0;
    const PlacementPlan plan = plan_placement(request);
    QVERIFY(plan.largest_context);
    const std::int64_t tokens = plan.largest_context->tokens;
    QCOMPARE(tokens, plan.largest_context->pages * pageSize);
    QVERIFY(fits_with(request, tokens));
    QVERIFY(!fits_with(request, tokens + pageSize));
  }

  // Context 0 is a valid answer: the weights fit, no page does.
  void zeroContextIsAllowed() {
    PlacementRequest request = model_a(0);
    request.devices[1].free_bytes = 300 * MiB;  // 264 usable: exactly the head's device
    const PlacementPlan plan = plan_placement(request);
    QVERIFY(plan.fits);
    QVERIFY(plan.largest_context);
    QCOMPARE(plan.largest_context->pages, std::int64_t(0));
    QCOMPARE(plan.largest_context->tokens, std::int64_t(0));
  }

  // A model without attention caches costs nothing per token: the answer is
  // the most pages a cache can address.
  void noCacheBytesMeansNoMemoryLimit() {
    PlacementRequest request;
    request.modules = layers_only(4, 100 * MiB);
    request.devices = {device(0, "A", 1000 * MiB)};
    const PlacementPlan plan = plan_placement(request);
    QVERIFY(plan.largest_context);
    QCOMPARE(plan.largest_context->pages, std::int64_t(std::numeric_limits<int>::max()));
    QCOMPARE(plan.largest_context->tokens, std::int64_t(std::numeric_limits<int>::max()) * 256);
  }
};

QUIRE_TEST(LargestContextTest)
#include "test_largest_context.moc"
