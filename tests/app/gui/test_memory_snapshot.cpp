// The memory panel's data as the engine thread builds it: for a model whose
// sliding layers keep their pages in a pool of their own (Gemma 2 and 3), the
// pool's pages with the chats that hold them, beside the global layers' map.

#include <QTest>
#include <algorithm>

#include "memory_snapshot.h"
#include "quire/engine/generator/generator.h"
#include "quire/engine/modelgen/random_model_spec.h"
#include "quire/engine/runtime/model_runtime.h"
#include "quire/kernels/cpu/cpu_backend.h"
#include "small_model.h"
#include "test_main.h"

using namespace quire;

namespace {

engine::JobRequest labelled_request(const char* label, std::uint32_t seed) {
  engine::JobRequest request;
  request.prompt = test::prompt_of(150, seed);
  request.sampling = engine::SamplingSettings::greedy_settings();
  request.max_new_tokens = 40;
  request.stop_at_eos = false;
  request.label = label;
  return request;
}

int count_state(const QList<ui::PageCellView>& pages, ui::PageCellState state) {
  return static_cast<int>(std::count_if(pages.begin(), pages.end(),
                                        [&](const auto& page) { return page.state == state; }));
}

}  // namespace

class MemorySnapshotTest : public QObject {
  Q_OBJECT

 private slots:
  // Gemma 3's shape: layers 0 and 1 slide over 11 positions, layer 2 sees
  // everything. Two chats of 150 prompt tokens, mid-reply, hold ten pages
  // each in the main pool and only their window's in the pool.
  void theWindowPoolIsMappedWithTheChatsThatHoldItsPages() {
    engine::modelgen::RandomModelSpec spec;
    spec.architecture = "gemma3";
    spec.sliding_window = 11;
    spec.sliding_window_pattern = 3;
    spec.layers = 3;
    spec.seed = 12;
    test::SmallModel model(spec);
    kernels::CpuBackend backend;
    engine::RuntimeOptions options = test::small_options();
    options.max_sequences = 3;  // a batch of two
    engine::ModelRuntime runtime(model.description, backend, options);
    engine::Generator generator(runtime, *model.tokenizer);
    generator.submit(labelled_request("Trip to Lisbon", 3));
    generator.submit(labelled_request("Bedtime story", 4));
    for (int step = 0; step < 8; ++step)
      QVERIFY(generator.step());
    QCOMPARE(generator.running(), std::size_t(2));

    const ui::MemorySnapshotView snapshot = gui::memory_snapshot(runtime, generator);
    const cache::PageCache& cache = runtime.cache();
    const cache::PageCache* pool = cache.window_pool();
    QVERIFY(pool);
    const ui::WindowPoolView& view = snapshot.window_pool;
    QCOMPARE(view.window_tokens, 11);
    QCOMPARE(view.sliding_layers, 2);
    QCOMPARE(view.layers, 3);
    QCOMPARE(view.pages.size(), qsizetype(pool->num_pages()));
    QCOMPARE(view.cache.total_pages, pool->num_pages());
    QVERIFY(pool->num_pages() < cache.num_pages());
    QCOMPARE(view.cache.page_size, 16);

    // Each chat's pages, found through its own page tables, carry its name in
    // both maps, and no other page is in use.
    int main_held = 0;
    int pool_held = 0;
    for (const cache::SequenceId sequence : cache.sequences()) {
      const QString label = QString::fromStdString(generator.label_of(sequence));
      QVERIFY(label == QStringLiteral("Trip to Lisbon") ||
              label == QStringLiteral("Bedtime story"));
      for (const cache::PageIndex page : cache.page_table(sequence)) {
        if (page == cache::kNoPage) continue;
        ++main_held;
        QCOMPARE(snapshot.pages[page].holders, QStringList{label});
      }
      // Its last 11 positions span one page of 16, or two.
      int held = 0;
      for (const cache::PageIndex page : cache.window_page_table(sequence)) {
        if (page == cache::kNoPage) continue;
        ++held;
        QCOMPARE(view.pages[page].holders, QStringList{label});
        QCOMPARE(view.pages[page].state, ui::PageCellState::Active);
      }
      QVERIFY2(held == 1 || held == 2, qPrintable(QString::number(held)));
      pool_held += held;
    }
    // Pages are reserved as a job is admitted: 150 + 40 tokens take twelve
    // pages of 16 each in the main pool.
    QCOMPARE(main_held, 24);
    QCOMPARE(count_state(view.pages, ui::PageCellState::Active), pool_held);
    QCOMPARE(view.cache.active_pages, pool_held);
    QCOMPARE(count_state(snapshot.pages, ui::PageCellState::Active), main_held);
    // The cache's bytes split by kind of layer: the sliding ones' pages in
    // the pool, the global one's in the main pool.
    qint64 pool_bytes = 0;
    qint64 global_bytes = 0;
    for (std::size_t layer = 0; layer < 3; ++layer) {
      const bool sliding = layer < 2;
      QCOMPARE(runtime.storage().windowed(layer), sliding);
      (sliding ? pool_bytes : global_bytes) +=
          runtime.storage().page_bytes(layer) * (sliding ? pool->num_pages() : cache.num_pages());
    }
    QCOMPARE(view.bytes, pool_bytes);
    QCOMPARE(view.global_bytes, global_bytes);
    const cache::CacheStats pool_stats = pool->stats();
    QCOMPARE(view.cache.free_pages, pool_stats.free_pages);
    QCOMPARE(view.cache.cached_pages, pool_stats.cached_pages);
  }

  // A coded cache with a residual window: the device's cache counts the
  // window's FP16 pages (one per layer, keys and values, for each of its two
  // slots) beside the coded pages, so none of it shows as other processes'.
  void theResidualWindowCountsAsCache() {
    test::SmallModel model(test::qwen2_spec(5));
    kernels::CpuBackend backend;
    engine::RuntimeOptions options = test::small_options(cache::CacheFormat::Q4);
    options.residual_window = 2;
    engine::ModelRuntime runtime(model.description, backend, options);
    engine::Generator generator(runtime, *model.tokenizer);
    generator.submit(labelled_request("Trip to Lisbon", 3));
    QVERIFY(generator.step());
    const ui::MemorySnapshotView snapshot = gui::memory_snapshot(runtime, generator);
    QCOMPARE(snapshot.devices.size(), qsizetype(1));
    const engine::ModelDescription& described = *model.description;
    const qint64 window = qint64{2} * described.config.num_layers * 16 *
                          described.config.num_kv_heads * described.config.head_dim * 2 * 2;
    QCOMPARE(runtime.storage().mirror_bytes_on(0), window);
    const cache::CacheStats stats = runtime.cache().stats();
    QCOMPARE(stats.devices.size(), std::size_t(1));
    QCOMPARE(snapshot.devices[0].cache, stats.devices[0].allocated_bytes + window);
  }

  void aModelWithoutAWindowPoolHasNone() {
    test::SmallModel model(test::qwen2_spec(5));
    kernels::CpuBackend backend;
    engine::ModelRuntime runtime(model.description, backend, test::small_options());
    engine::Generator generator(runtime, *model.tokenizer);
    generator.submit(labelled_request("Trip to Lisbon", 3));
    QVERIFY(generator.step());
    const ui::MemorySnapshotView snapshot = gui::memory_snapshot(runtime, generator);
    QVERIFY(snapshot.window_pool.isEmpty());
    QCOMPARE(snapshot.window_pool, ui::WindowPoolView{});
    QCOMPARE(snapshot.pages.size(), qsizetype(64));
  }
};

QUIRE_TEST(MemorySnapshotTest)
#include "test_memory_snapshot.moc"
