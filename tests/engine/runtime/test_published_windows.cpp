// Phi-3.5-mini and Phi-4-mini as published, on small models made from their
// config.json (make-model --config-from): both slide every layer over 262144
// positions of their 131072, a window that no sequence of theirs reaches.
// Its attention hides nothing, so the plan prices their context as the
// model's limit, not as a window, and "offload global layers" takes every
// layer; a window inside the context still binds. Phi-4-mini ties its head
// to the embedding and its files hold no lm_head.

#include <QTest>

#include "quire/engine/modelgen/published_config.h"
#include "runtime_test_support.h"
#include "test_main.h"

using namespace quire;
using quire::test::TestModel;

namespace {

constexpr int kPageSize = 256;

engine::RuntimeOptions options() {
  engine::RuntimeOptions o;
  o.page_size = kPageSize;
  o.max_chunk_tokens = 256;
  o.reserve_bytes = 0;
  o.step_graphs = false;
  return o;
}

// A device with room for thousands of pages of these small models, more
// than a 262144-token window would hold.
std::vector<kernels::DeviceInfo> one_large_device() {
  kernels::CpuBackend backend(kernels::CpuBackend::parse_devices("cpu:2GiB"));
  return backend.devices();
}

engine::modelgen::RandomModelSpec published(const char* config) {
  return engine::modelgen::spec_from_published_config(
      std::filesystem::path(QUIRE_TEST_DATA_DIR "/configs") / config);
}

}  // namespace

class PublishedWindowsTest : public QObject {
  Q_OBJECT

 private slots:
  void aWindowWiderThanTheContextIsNone_data() {
    QTest::addColumn<QString>("config");
    QTest::addColumn<bool>("tied");
    QTest::newRow("phi-3.5-mini-instruct") << QStringLiteral("phi-3.5-mini-instruct.json") << false;
    QTest::newRow("phi-4-mini-instruct") << QStringLiteral("phi-4-mini-instruct.json") << true;
  }

  void aWindowWiderThanTheContextIsNone() {
    QFETCH(QString, config);
    QFETCH(bool, tied);
    const TestModel model(published(config.toLatin1().constData()));
    const engine::ModelDescription& description = *model.description();
    const engine::ModelConfig& c = description.config;
    QCOMPARE(description.head_tied, tied);
    QCOMPARE(description.tensors.contains("lm_head.weight"), !tied);
    QCOMPARE(description.head.key, std::string(tied ? "model.embed_tokens" : "lm_head"));
    // The layers keep the window as written; it binds nowhere.
    QCOMPARE(c.max_position_embeddings, std::int64_t(131072));
    QCOMPARE(c.sliding_windows, std::vector<int>(2, 262144));
    QCOMPARE(c.binding_window(0), 0);
    QCOMPARE(c.binding_window(1), 0);
    QCOMPARE(c.uniform_sliding_window(), 0);

    // The cache the model reads at most: 131072 tokens, 512 pages of 256.
    const engine::PlacementRequest request =
        engine::placement_request(description, one_large_device(), options());
    QCOMPARE(request.window_pages, std::int64_t(0));
    QCOMPARE(request.context_tokens, std::int64_t(131072));
    QCOMPARE(request.model_context_tokens, std::int64_t(131072));
    for (const engine::ModuleCost& module : request.modules)
      QCOMPARE(module.sliding_window, std::int64_t(0));
    const engine::PlacementPlan plan = engine::plan_placement(request);
    QVERIFY2(plan.fits, plan.problem.c_str());
    QCOMPARE(plan.pages, std::int64_t(512));
    QVERIFY(plan.largest_context);
    QCOMPARE(plan.largest_context->tokens, std::int64_t(131072));
    QCOMPARE(plan.largest_context->pages, std::int64_t(512));
    QVERIFY(plan.largest_context->model_limit);
    QVERIFY(!plan.largest_context->window_bounded);

    // Every layer holds its whole context: each is a global layer.
    for (std::size_t layer = 0; layer < description.layers.size(); ++layer) {
      QVERIFY(engine::cache_layer_offloaded(description, layer,
                                            engine::CacheResidence::OffloadGlobalLayers));
    }
  }

  // Phi-3-mini-4k-instruct's window of 2047, here over 8192 positions (more
  // than longrope's original 4096).
  void aWindowInsideTheContextBinds() {
    engine::modelgen::RandomModelSpec spec = published("phi-4-mini-instruct.json");
    spec.sliding_window = 2047;
    spec.max_position_embeddings = 8192;
    const TestModel model(spec);
    const engine::ModelDescription& description = *model.description();
    QCOMPARE(description.config.binding_window(0), 2047);
    QCOMPARE(description.config.uniform_sliding_window(), 2047);
    const engine::PlacementRequest request =
        engine::placement_request(description, one_large_device(), options());
    // The window and one prefill step: (2046 + 256) / 256 rounded up, and one more.
    QCOMPARE(request.window_pages, std::int64_t(10));
    const engine::PlacementPlan plan = engine::plan_placement(request);
    QVERIFY(plan.largest_context);
    QVERIFY(plan.largest_context->window_bounded);
    QCOMPARE(plan.largest_context->tokens, std::int64_t(8192));
    QVERIFY(!engine::cache_layer_offloaded(description, 0,
                                           engine::CacheResidence::OffloadGlobalLayers));
  }
};

QUIRE_TEST(PublishedWindowsTest)
#include "test_published_windows.moc"
