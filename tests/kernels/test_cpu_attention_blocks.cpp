// Paged attention of the CPU backend over contexts of many key blocks: a
// prefill chunk spanning several query blocks, decode steps whose key range is
// split between threads, sliding windows that cut key blocks and separate a
// sequence's queries, head sizes off the vector widths, soft-capped scores.
// The reference is attention over the independently decoded pages in double
// precision.

#include <QTest>
#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "kv_test_support.h"
#include "quire/kernels/cpu/cpu_backend.h"
#include "quire/kernels/cpu/thread_pool.h"
#include "test_main.h"

using namespace quire::kernels;

Q_DECLARE_METATYPE(KvCoding)

namespace {

constexpr int kPageSize = 16, kKvHeads = 2, kHeads = 6, kMaxPages = 70, kPages = 140;
constexpr int kLengths[] = {1100, 700, 300};
constexpr int kSequences = 3;

struct Query {
  int sequence;
  int position;
  int visible_through = -1;  // -1: causal, its own position
  int visible_from = -1;     // with visible_through: its block's first position
};

// Writes random K/V (with an outlier channel) for every sequence and keeps the
// decoded pages: [sequence][position][kv head][dim].
struct Context {
  quire::test::KvStorage storage;
  std::vector<std::int32_t> tables;
  std::vector<std::vector<float>> keys, values;

  Context(CpuBackend& backend, KvCoding key_coding, KvCoding value_coding, int dim)
      : storage(make_kv_layout(key_coding, value_coding, kPageSize, kKvHeads, dim, kPages)),
        tables(std::size_t(kSequences * kMaxPages), -1) {
    std::mt19937 rng(7);
    std::vector<std::int32_t> pages(kPages);
    std::iota(pages.begin(), pages.end(), 0);
    std::shuffle(pages.begin(), pages.end(), rng);
    std::size_t next = 0;
    std::normal_distribution<float> normal(0.0f, 1.0f);
    const auto random_row = [&](std::vector<float>& row) {
      for (std::size_t i = 0; i < row.size(); ++i)
        row[i] = normal(rng) * (i % std::size_t(dim) == 5 ? 12.0f : 1.0f);
    };
    for (int s = 0; s < kSequences; ++s) {
      for (int p = 0; p < (kLengths[s] + kPageSize - 1) / kPageSize; ++p)
        tables[std::size_t(s * kMaxPages + p)] = pages[next++];
      // Page-aligned chunks of 64 tokens, as prefill writes them.
      for (int begin = 0; begin < kLengths[s]; begin += 64) {
        const int count = std::min(64, kLengths[s] - begin);
        const std::vector<std::int32_t> sequence(static_cast<std::size_t>(count), s);
        std::vector<std::int32_t> position(static_cast<std::size_t>(count));
        std::iota(position.begin(), position.end(), begin);
        std::vector<float> k(std::size_t(count * kKvHeads * dim)), v(k.size());
        random_row(k);
        random_row(v);
        const TokenBatch batch{sequence.data(), position.data(), tables.data(), count, kMaxPages};
        backend.write_kv(0, storage.view, batch, k.data(), v.data());
      }
      std::vector<float> k, v;
      for (int p = 0; p < kLengths[s]; ++p) {
        const int page = tables[std::size_t(s * kMaxPages + p / kPageSize)];
        for (int h = 0; h < kKvHeads; ++h) {
          const std::vector<float> dk =
              quire::test::decode_stored(storage, true, page, p % kPageSize, h);
          const std::vector<float> dv =
              quire::test::decode_stored(storage, false, page, p % kPageSize, h);
          k.insert(k.end(), dk.begin(), dk.end());
          v.insert(v.end(), dv.begin(), dv.end());
        }
      }
      keys.push_back(std::move(k));
      values.push_back(std::move(v));
    }
  }
};

}  // namespace

class CpuAttentionBlocksTest : public QObject {
  Q_OBJECT

  // Attends `queries` in one batch and compares every output with the reference.
  // softcap > 0: scores capped (Gemma 2) in the backend and the reference.
  static void check(CpuBackend& backend, const Context& context, const std::vector<Query>& queries,
                    int dim, int window, int heads = kHeads, float softcap = 0.0f) {
    std::vector<std::int32_t> sequence, position, visible, from;
    bool both_ways = false;
    std::vector<float> q;
    std::mt19937 rng(99);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (const Query& query : queries) {
      sequence.push_back(query.sequence);
      position.push_back(query.position);
      visible.push_back(query.visible_through < 0 ? query.position : query.visible_through);
      from.push_back(query.visible_from < 0 ? query.position : query.visible_from);
      both_ways = both_ways || query.visible_through >= 0;
      for (int i = 0; i < heads * dim; ++i)
        q.push_back(normal(rng));
    }
    TokenBatch batch{sequence.data(), position.data(), context.tables.data(),
                     std::int64_t(queries.size()), kMaxPages};
    if (both_ways) {
      batch.visible_from = from.data();
      batch.visible_through = visible.data();
    }
    const float scale = 1.0f / std::sqrt(float(dim));
    std::vector<float> out(q.size(), std::nanf(""));
    backend.paged_attention(0, context.storage.view, batch, q.data(),
                            AttentionParams{heads, scale, window, softcap}, out.data());

    for (std::size_t t = 0; t < queries.size(); ++t) {
      const int s = queries[t].sequence, own = queries[t].position;
      const int last = visible[t];
      // The window counts back from the query's own position; a block's
      // keys are all seen.
      const int first = window ? std::min(std::max(0, own - window + 1), from[t]) : 0;
      for (int head = 0; head < heads; ++head) {
        const int kv = head / (heads / kKvHeads);
        const float* query = q.data() + (t * heads + std::size_t(head)) * std::size_t(dim);
        std::vector<double> weights;
        double maximum = -1e300;
        for (int p = first; p <= last; ++p) {
          const float* key =
              context.keys[std::size_t(s)].data() + std::size_t((p * kKvHeads + kv) * dim);
          double dot = 0;
          for (int d = 0; d < dim; ++d)
            dot += double(query[d]) * key[d];
          const double score = dot * scale;
          weights.push_back(softcap > 0.0f ? softcap * std::tanh(score / softcap) : score);
          maximum = std::max(maximum, weights.back());
        }
        double total = 0;
        for (double& weight : weights)
          total += (weight = std::exp(weight - maximum));
        for (int d = 0; d < dim; ++d) {
          double expected = 0;
          for (int p = first; p <= last; ++p) {
            expected += weights[std::size_t(p - first)] / total *
                        context.values[std::size_t(s)][std::size_t((p * kKvHeads + kv) * dim + d)];
          }
          const float actual =
              out[(t * heads + std::size_t(head)) * std::size_t(dim) + std::size_t(d)];
          QVERIFY2(std::fabs(actual - expected) < 1e-4 * (1 + std::fabs(expected)),
                   qPrintable(QString("query %1 head %2 dim %3: %4 vs %5")
                                  .arg(t)
                                  .arg(head)
                                  .arg(d)
                                  .arg(actual)
                                  .arg(expected)));
        }
      }
    }
  }

 private slots:
  void longContexts_data() {
    QTest::addColumn<KvCoding>("keyCoding");
    QTest::addColumn<KvCoding>("valueCoding");
    QTest::addColumn<int>("dim");
    QTest::addColumn<int>("window");
    QTest::addColumn<int>("threads");
    QTest::addColumn<float>("softcap");
    const KvCoding fp16 = KvCoding::Fp16, q8 = KvCoding::Int8, q4 = KvCoding::Int4,
                   fp8 = KvCoding::Fp8;
    QTest::newRow("fp16, 1 thread") << fp16 << fp16 << 64 << 0 << 1 << 0.0f;
    QTest::newRow("fp16, 8 threads") << fp16 << fp16 << 64 << 0 << 8 << 0.0f;
    QTest::newRow("fp16, window 100") << fp16 << fp16 << 64 << 100 << 8 << 0.0f;
    QTest::newRow("fp16, head 80") << fp16 << fp16 << 80 << 0 << 8 << 0.0f;
    QTest::newRow("fp16, head 36, window 70") << fp16 << fp16 << 36 << 70 << 1 << 0.0f;
    QTest::newRow("q8") << q8 << q8 << 64 << 0 << 8 << 0.0f;
    QTest::newRow("q6, window 100") << q8 << q4 << 64 << 100 << 1 << 0.0f;
    QTest::newRow("q4, head 96") << q4 << q4 << 96 << 0 << 8 << 0.0f;
    QTest::newRow("fp8") << fp8 << fp8 << 64 << 0 << 1 << 0.0f;
    QTest::newRow("fp8, window 100") << fp8 << fp8 << 64 << 100 << 8 << 0.0f;
    // Soft-capped scores (Gemma 2), with a cap that bends most of them.
    QTest::newRow("fp16, softcap") << fp16 << fp16 << 64 << 0 << 8 << 2.0f;
    QTest::newRow("fp16, 1 thread, softcap") << fp16 << fp16 << 64 << 0 << 1 << 2.0f;
    QTest::newRow("fp16, head 36, window 70, softcap") << fp16 << fp16 << 36 << 70 << 1 << 3.0f;
    QTest::newRow("q8, window 100, softcap") << q8 << q8 << 64 << 100 << 8 << 2.0f;
    QTest::newRow("q6, softcap") << q8 << q4 << 64 << 0 << 1 << 2.0f;
    QTest::newRow("q4, head 96, window 100, softcap") << q4 << q4 << 96 << 100 << 8 << 2.0f;
    QTest::newRow("fp8, softcap") << fp8 << fp8 << 64 << 0 << 8 << 2.0f;
    QTest::newRow("fp8, window 100, softcap") << fp8 << fp8 << 64 << 100 << 1 << 2.0f;
  }

  void longContexts() {
    QFETCH(KvCoding, keyCoding);
    QFETCH(KvCoding, valueCoding);
    QFETCH(int, dim);
    QFETCH(int, window);
    QFETCH(int, threads);
    QFETCH(float, softcap);
    ThreadPool pool(threads);
    CpuBackend backend({}, &pool);
    const Context context(backend, keyCoding, valueCoding, dim);

    // A prefill chunk of 70 tokens (more than one query block), mixed with
    // decode steps of the other sequences, in shuffled order. With a window,
    // sequence 2's two queries see disjoint keys.
    std::vector<Query> mixed{{1, 699}, {2, 100}, {2, 290}};
    for (int p = 1030; p < 1100; ++p)
      mixed.push_back({0, p});
    std::shuffle(mixed.begin(), mixed.end(), std::mt19937(3));
    check(backend, context, mixed, dim, window, kHeads, softcap);
    if (QTest::currentTestFailed()) return;

    // One decode step: too few items for 8 threads, so its key range is split.
    check(backend, context, {{0, 1099}}, dim, window, kHeads, softcap);
    if (QTest::currentTestFailed()) return;
    check(backend, context, {{2, 299}, {1, 64}}, dim, window, kHeads, softcap);
  }

  // Positions that see later keys (Gemma 3's image blocks at prefill): a
  // chunk where a block of 40 positions attends both ways between causal
  // text, a window shorter than the block, and lone rows that see ahead
  // (the decode kernels' path).
  void blocksThatAttendBothWays_data() {
    QTest::addColumn<KvCoding>("coding");
    QTest::addColumn<int>("window");
    QTest::addColumn<int>("threads");
    QTest::newRow("fp16, 1 thread") << KvCoding::Fp16 << 0 << 1;
    QTest::newRow("fp16, 8 threads") << KvCoding::Fp16 << 0 << 8;
    QTest::newRow("fp16, window 30") << KvCoding::Fp16 << 30 << 8;
    QTest::newRow("q4, window 100") << KvCoding::Int4 << 100 << 1;
    QTest::newRow("fp8") << KvCoding::Fp8 << 0 << 8;
  }

  void blocksThatAttendBothWays() {
    QFETCH(KvCoding, coding);
    QFETCH(int, window);
    QFETCH(int, threads);
    ThreadPool pool(threads);
    CpuBackend backend({}, &pool);
    const int dim = 64;
    const Context context(backend, coding, coding, dim);
    std::vector<Query> chunk;
    for (int p = 1030; p < 1100; ++p)
      chunk.push_back({0, p, p >= 1040 && p < 1080 ? 1079 : -1, p >= 1040 && p < 1080 ? 1040 : -1});
    chunk.push_back({2, 250, 299, 240});
    std::shuffle(chunk.begin(), chunk.end(), std::mt19937(5));
    check(backend, context, chunk, dim, window);
    if (QTest::currentTestFailed()) return;
    check(backend, context, {{1, 600, 699, 520}}, dim, window);
    if (QTest::currentTestFailed()) return;
    check(backend, context, {{1, 600, 699, 520}}, dim, window, 2 * kKvHeads);
  }

  // A row may not see before itself, nor past its page table.
  void visibilityOutsideTheRowIsRefused() {
    CpuBackend backend;
    const Context context(backend, KvCoding::Fp16, KvCoding::Fp16, 64);
    const std::vector<std::int32_t> sequence{0}, position{500};
    std::vector<float> q(std::size_t(kHeads * 64), 0.5f), out(q.size());
    for (const auto& [first, through] : std::vector<std::pair<std::int32_t, std::int32_t>>{
             {500, 499}, {500, kMaxPages * kPageSize}, {501, 510}, {-1, 510}}) {
      const std::vector<std::int32_t> from{first}, visible{through};
      TokenBatch batch{sequence.data(), position.data(), context.tables.data(), 1, kMaxPages};
      batch.visible_from = from.data();
      batch.visible_through = visible.data();
      QVERIFY_THROWS_EXCEPTION(
          std::out_of_range,
          backend.paged_attention(0, context.storage.view, batch, q.data(),
                                  AttentionParams{kHeads, 0.125f, 0, 0.0f}, out.data()));
    }
  }

  // Decode steps (one token per sequence) with every number of query heads per
  // K/V head from 1 to 9: the FP16 decode kernel takes up to 8, with their
  // sums in registers, and leaves more to the general kernel.
  void decodeStepsOfEveryGroupSize_data() {
    QTest::addColumn<int>("group");
    QTest::addColumn<int>("dim");
    QTest::addColumn<int>("threads");
    QTest::addColumn<float>("softcap");
    for (int group = 1; group <= 9; ++group) {
      QTest::addRow("group %d, head 64, 1 thread", group) << group << 64 << 1 << 0.0f;
      QTest::addRow("group %d, head 128, 8 threads", group) << group << 128 << 8 << 0.0f;
    }
    QTest::addRow("group 3, head 40, 8 threads") << 3 << 40 << 8 << 0.0f;
    // The FP16 decode kernel caps its scores as the general one does.
    for (const int group : {1, 4, 8, 9})
      QTest::addRow("group %d, head 128, 8 threads, softcap", group) << group << 128 << 8 << 2.0f;
    QTest::addRow("group 2, head 64, 1 thread, softcap") << 2 << 64 << 1 << 2.0f;
  }

  void decodeStepsOfEveryGroupSize() {
    QFETCH(int, group);
    QFETCH(int, dim);
    QFETCH(int, threads);
    QFETCH(float, softcap);
    ThreadPool pool(threads);
    CpuBackend backend({}, &pool);
    const Context context(backend, KvCoding::Fp16, KvCoding::Fp16, dim);
    const int heads = group * kKvHeads;
    check(backend, context, {{0, 1099}}, dim, 0, heads, softcap);
    if (QTest::currentTestFailed()) return;
    check(backend, context, {{0, 0}, {1, 64}, {2, 299}}, dim, 0, heads, softcap);
    if (QTest::currentTestFailed()) return;
    check(backend, context, {{1, 699}}, dim, 100, heads, softcap);
  }
};

QUIRE_TEST(CpuAttentionBlocksTest)
#include "test_cpu_attention_blocks.moc"
