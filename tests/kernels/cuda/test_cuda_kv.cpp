// The CUDA backend's paged K/V ops against the CPU backend, for every cache
// coding (FP16, Q8, Q6, Q4, FP8): write_kv byte for byte (FP8 scale growth
// and re-encoding included), paged_attention within a stated tolerance on
// decode batches and prefill chunks over cached prefixes (several pages with
// a partial last one, sliding windows, grouped-query attention, Gemma 2's
// soft-capped scores), and the page copies, saves and restores byte for
// byte. Inputs are fresh random numbers (the seed is printed), never zeros;
// outputs are poisoned with NaN first. Part of the ops suite: label "gpu",
// skipped without a backend.

#include <QScopeGuard>
#include <QTest>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "cuda_kv_test_support.h"
#include "cuda_test_support.h"
#include "quire/kernels/cpu/cpu_backend.h"
#include "test_main.h"

using namespace quire::kernels;

using namespace quire::test::cuda_kv;

class CudaKvTest : public QObject {
  Q_OBJECT

 public:
  template <typename T>
  DeviceBuffer upload(const std::vector<T>& host) {
    return quire::test::upload_to_gpu(*gpu_, host);
  }

  // A HostBatch's arrays on the GPU, and the TokenBatch over them.
  struct GpuBatch {
    DeviceBuffer sequence, position, tables;
    TokenBatch view;
  };
  GpuBatch upload(const HostBatch& host) {
    GpuBatch batch{upload(host.sequence), upload(host.position), upload(host.tables), {}};
    batch.view = TokenBatch{batch.sequence.as<std::int32_t>(), batch.position.as<std::int32_t>(),
                            batch.tables.as<std::int32_t>(), host.tokens(), host.max_pages};
    return batch;
  }

  std::vector<float> download_floats(const DeviceBuffer& buffer, std::size_t count) {
    return quire::test::download_floats(*gpu_, buffer, count);
  }

  // The same K/V write on both backends, values [tokens, kv_heads, head_dim].
  void write_both(KvLayer& cpu_layer, KvLayer& gpu_layer, const HostBatch& batch,
                  const std::vector<float>& key, const std::vector<float>& value) {
    cpu_.write_kv(kDevice, cpu_layer.view(), batch.view(), key.data(), value.data());
    GpuBatch device = upload(batch);
    DeviceBuffer key_gpu = upload(key), value_gpu = upload(value);
    gpu_->write_kv(kDevice, gpu_layer.view(), device.view, key_gpu.as<float>(),
                   value_gpu.as<float>());
    gpu_->synchronize(kDevice);
  }

  // Pages filled by the CPU with random K/V for every slot, the same bytes
  // on the GPU.
  void fill_pages(KvLayer& cpu_layer, KvLayer& gpu_layer) {
    const KvLayerLayout& layout = cpu_layer.layout;
    std::vector<std::int32_t> all(static_cast<std::size_t>(layout.num_pages));
    std::iota(all.begin(), all.end(), 0);
    HostBatch batch = make_tables({all});
    add_tokens(batch, 0, 0, layout.num_pages * layout.page_size);
    const std::size_t count =
        std::size_t(batch.tokens()) * std::size_t(layout.kv_heads) * std::size_t(layout.head_dim);
    const std::vector<float> key = uniform(count, -1.5f, 1.5f, rng_);
    const std::vector<float> value = uniform(count, -1.0f, 1.0f, rng_);
    cpu_.write_kv(kDevice, cpu_layer.view(), batch.view(), key.data(), value.data());
    clone_pages(cpu_, cpu_layer, *gpu_, gpu_layer);
  }

  // paged_attention on both backends over the same pages; compares outputs.
  void attend_both(const KvLayer& cpu_layer, const KvLayer& gpu_layer, const HostBatch& batch,
                   const AttentionParams& params, const char* what) {
    const std::size_t count = std::size_t(batch.tokens()) * std::size_t(params.heads) *
                              std::size_t(cpu_layer.layout.head_dim);
    const std::vector<float> query = uniform(count, -3.0f, 3.0f, rng_);
    std::vector<float> expected(count, kNaN);
    cpu_.paged_attention(kDevice, cpu_layer.view(), batch.view(), query.data(), params,
                         expected.data());
    GpuBatch device = upload(batch);
    DeviceBuffer query_gpu = upload(query);
    DeviceBuffer out = upload(std::vector<float>(count, kNaN));
    gpu_->paged_attention(kDevice, gpu_layer.view(), device.view, query_gpu.as<float>(), params,
                          out.as<float>());
    expect_close(expected, download_floats(out, count), what);
  }

 private slots:
  void initTestCase() {
    QString why_not;
    gpu_ = quire::test::start_cuda_backend(rng_, why_not);
    if (!gpu_) QSKIP(qPrintable(why_not));
  }

  void cleanupTestCase() { gpu_.reset(); }

  void writeKv_data() {
    QTest::addColumn<QByteArray>("coding");
    QTest::addColumn<int>("headDim");
    QTest::addColumn<int>("kvHeads");
    QTest::addColumn<int>("pageSize");
    for (const char* coding : kCodings) {
      const QByteArray name(coding);
      QTest::addRow("%s d64 h3 p16", coding) << name << 64 << 3 << 16;
      QTest::addRow("%s d128 h2 p256", coding) << name << 128 << 2 << 256;
      QTest::addRow("%s d96 h4 p16", coding) << name << 96 << 4 << 16;
      if (!integer_coding(name)) QTest::addRow("%s d80 h2 p16", coding) << name << 80 << 2 << 16;
    }
  }

  // Pages full of earlier content, then one step that mixes a prefill chunk
  // from slot 0 over two and a half pages, a decode token in the middle of a
  // page with larger values (FP8: the page's scale grows, earlier slots are
  // re-encoded) and a 7-token chunk from slot 3 whose values grow token by
  // token (FP8: several growths within one call). The sequences' tokens are
  // interleaved at random, each sequence in order.
  void writeKv() {
    QFETCH(QByteArray, coding);
    QFETCH(int, headDim);
    QFETCH(int, kvHeads);
    QFETCH(int, pageSize);
    const CodingPair pair = coding_pair(coding);
    const KvLayerLayout layout =
        make_kv_layout(pair.key, pair.value, pageSize, kvHeads, headDim, 12);
    KvLayer cpu_layer = make_layer(cpu_, layout);
    KvLayer gpu_layer = make_layer(*gpu_, layout);
    fill_pages(cpu_layer, gpu_layer);

    const HostBatch tables = make_tables({{3, 7, 1}, {5, 9}, {2}});
    struct Run {
      int sequence, first, count;
      float magnitude, growth;
    };
    const Run runs[] = {{0, 0, 2 * pageSize + pageSize / 2, 1.0f, 1.0f},
                        {1, pageSize + 6, 1, 6.0f, 1.0f},
                        {2, 3, 7, 0.25f, 1.7f}};
    std::vector<int> order;
    for (int r = 0; r < 3; ++r)
      order.insert(order.end(), std::size_t(runs[r].count), r);
    std::shuffle(order.begin(), order.end(), rng_);

    HostBatch batch = tables;
    std::vector<float> key, value;
    int done[3] = {0, 0, 0};
    const std::size_t row = std::size_t(kvHeads) * std::size_t(headDim);
    for (const int r : order) {
      const Run& run = runs[r];
      const int i = done[r]++;
      add_tokens(batch, run.sequence, run.first + i, 1);
      const float magnitude = run.magnitude * std::pow(run.growth, float(i));
      const std::vector<float> k = uniform(row, -magnitude, magnitude, rng_);
      const std::vector<float> v = uniform(row, -magnitude, magnitude, rng_);
      key.insert(key.end(), k.begin(), k.end());
      value.insert(value.end(), v.begin(), v.end());
    }
    write_both(cpu_layer, gpu_layer, batch, key, value);
    expect_same_pages(cpu_, cpu_layer, *gpu_, gpu_layer, "write_kv");
  }

  // Calibrated FP8 scales (not powers of two, one per head) on either half:
  // the GPU's codes and page scales are the CPU's, values beyond the scale's
  // range saturating alike, and attention over them agrees.
  void writeKvCalibrated_data() {
    QTest::addColumn<bool>("keys");
    QTest::addColumn<bool>("values");
    QTest::addRow("both") << true << true;
    QTest::addRow("keys only") << true << false;
    QTest::addRow("values only") << false << true;
  }

  void writeKvCalibrated() {
    QFETCH(bool, keys);
    QFETCH(bool, values);
    constexpr int kHeads = 3, kHeadDim = 64, kPage = 16;
    const KvLayerLayout layout =
        make_kv_layout(KvCoding::Fp8, KvCoding::Fp8, kPage, kHeads, kHeadDim, 8);
    KvLayer cpu_layer = make_layer(cpu_, layout);
    KvLayer gpu_layer = make_layer(*gpu_, layout);
    fill_pages(cpu_layer, gpu_layer);
    const std::vector<float> scales = {0.0031f, 0.0027f, 0.011f, 0.0042f, 0.0019f, 0.0077f};
    DeviceBuffer gpu_scales = upload(scales);
    const KvCalibratedScales cpu_calibrated{keys ? scales.data() : nullptr,
                                            values ? scales.data() + kHeads : nullptr};
    const KvCalibratedScales gpu_calibrated{keys ? gpu_scales.as<float>() : nullptr,
                                            values ? gpu_scales.as<float>() + kHeads : nullptr};

    HostBatch batch = make_tables({{3, 1, 6}, {5}});
    add_tokens(batch, 0, 0, 2 * kPage + 5);
    add_tokens(batch, 1, 7, 3);
    const std::size_t count = std::size_t(batch.tokens()) * kHeads * kHeadDim;
    const std::vector<float> key = uniform(count, -2.0f, 2.0f, rng_);
    const std::vector<float> value = uniform(count, -4.0f, 4.0f, rng_);
    KvLayerView cpu_view = cpu_layer.view();
    cpu_view.calibrated = cpu_calibrated;
    KvLayerView gpu_view = gpu_layer.view();
    gpu_view.calibrated = gpu_calibrated;
    cpu_.write_kv(kDevice, cpu_view, batch.view(), key.data(), value.data());
    GpuBatch device = upload(batch);
    DeviceBuffer key_gpu = upload(key), value_gpu = upload(value);
    gpu_->write_kv(kDevice, gpu_view, device.view, key_gpu.as<float>(), value_gpu.as<float>());
    gpu_->synchronize(kDevice);
    expect_same_pages(cpu_, cpu_layer, *gpu_, gpu_layer, "calibrated write_kv");
    AttentionParams params;
    params.heads = 2 * kHeads;
    params.scale = 0.125f;
    attend_both(cpu_layer, gpu_layer, batch, params, "attention over calibrated pages");
  }

  void pagedAttention_data() {
    QTest::addColumn<QByteArray>("coding");
    QTest::addColumn<int>("headDim");
    QTest::addColumn<int>("kvHeads");
    QTest::addColumn<int>("group");
    QTest::addColumn<int>("pageSize");
    QTest::addColumn<int>("window");
    QTest::addColumn<float>("softcap");
    for (const char* coding : kCodings) {
      const QByteArray name(coding);
      QTest::addRow("%s d64 g1 p16", coding) << name << 64 << 4 << 1 << 16 << 0 << 0.0f;
      QTest::addRow("%s d128 g4 p256", coding) << name << 128 << 2 << 4 << 256 << 0 << 0.0f;
      QTest::addRow("%s d96 g8 p16 window", coding) << name << 96 << 2 << 8 << 16 << 37 << 0.0f;
      QTest::addRow("%s d256 g2 p32", coding) << name << 256 << 1 << 2 << 32 << 0 << 0.0f;
      if (!integer_coding(name))
        QTest::addRow("%s d80 g4 p16 window", coding) << name << 80 << 3 << 4 << 16 << 300 << 0.0f;
      // Gemma 2's soft-capped scores, with a cap that bends most of them.
      QTest::addRow("%s d128 g4 p16 softcap", coding) << name << 128 << 2 << 4 << 16 << 0 << 1.0f;
      QTest::addRow("%s d256 g2 p32 window softcap", coding)
          << name << 256 << 2 << 2 << 32 << 37 << 1.0f;
    }
  }

  // A decode step of five sequences of different lengths (one token each,
  // contexts of 1 to 700 keys: several pages and a partial last one), a
  // 7-token chunk (the decode kernel with several tokens of one sequence), and
  // a 100-token prefill chunk over a 300-token cached prefix in the same step
  // as two decode tokens (the prefill kernel, mixed sequences).
  void pagedAttention() {
    QFETCH(QByteArray, coding);
    QFETCH(int, headDim);
    QFETCH(int, kvHeads);
    QFETCH(int, group);
    QFETCH(int, pageSize);
    QFETCH(int, window);
    QFETCH(float, softcap);
    compare_paged_attention(coding, headDim, kvHeads, group, pageSize, window, softcap);
  }

  void pagedAttentionOnSmallerGpus_data() {
    QTest::addColumn<QByteArray>("coding");
    QTest::addColumn<int>("sharedBytes");
    QTest::addColumn<int>("headDim");
    // Turing's 64 KiB: the small prefill tile from head_dim 112; sm_86, 89
    // and 120's 99 KiB: the small tile at 256.
    for (const char* coding : {"fp16", "q4"}) {
      QTest::addRow("%s 64 KiB d128", coding) << QByteArray(coding) << 65536 << 128;
      QTest::addRow("%s 64 KiB d192", coding) << QByteArray(coding) << 65536 << 192;
      QTest::addRow("%s 99 KiB d256", coding) << QByteArray(coding) << 101376 << 256;
    }
  }

  // The kernels a GPU with less shared memory per block takes, run here by
  // lowering the limit the backend plans with.
  void pagedAttentionOnSmallerGpus() {
    QFETCH(QByteArray, coding);
    QFETCH(int, sharedBytes);
    QFETCH(int, headDim);
    qputenv("QUIRE_CUDA_ATTENTION_SHARED_BYTES", QByteArray::number(sharedBytes));
    const auto restore = qScopeGuard([] { qunsetenv("QUIRE_CUDA_ATTENTION_SHARED_BYTES"); });
    compare_paged_attention(coding, headDim, 2, 4, 32, 0);
  }

  // Where no kernel fits (head_dim 256 on Turing's 64 KiB), attention says
  // so, naming the GPU and the sizes, instead of failing at launch.
  void attentionTooLargeForTheGpuIsRefused() {
    qputenv("QUIRE_CUDA_ATTENTION_SHARED_BYTES", "65536");
    const auto restore = qScopeGuard([] { qunsetenv("QUIRE_CUDA_ATTENTION_SHARED_BYTES"); });
    const KvLayerLayout layout = make_kv_layout(KvCoding::Fp16, KvCoding::Fp16, 16, 1, 256, 4);
    KvLayer gpu_layer = make_layer(*gpu_, layout);
    const std::vector<std::vector<std::int32_t>> pages = {{0, 1}};
    HostBatch decode = make_tables(pages);
    add_tokens(decode, 0, 20, 1);
    AttentionParams params;
    params.heads = 2;
    params.scale = 1.0f / 16.0f;
    const std::size_t count = std::size_t(decode.tokens()) * 2 * 256;
    GpuBatch device = upload(decode);
    DeviceBuffer query = upload(uniform(count, -1.0f, 1.0f, rng_));
    DeviceBuffer out = upload(std::vector<float>(count, kNaN));
    try {
      gpu_->paged_attention(kDevice, gpu_layer.view(), device.view, query.as<float>(), params,
                            out.as<float>());
      QFAIL("attention at head_dim 256 ran within 64 KiB of shared memory");
    } catch (const std::invalid_argument& error) {
      const std::string message = error.what();
      QVERIFY2(message.find("64 KiB of shared memory") != std::string::npos &&
                   message.find("head_dim 256 needs 73 KiB") != std::string::npos &&
                   message.find("--devices cpu") != std::string::npos,
               error.what());
    }
  }

 private:
  void compare_paged_attention(const QByteArray& coding, int headDim, int kvHeads, int group,
                               int pageSize, int window, float softcap = 0.0f) {
    const CodingPair pair = coding_pair(coding);
    const std::vector<int> lengths = {17, 700, 1, 300 + 100, 45, 260};
    const int num_pages = pages_needed(lengths, pageSize) + 3;
    const KvLayerLayout layout =
        make_kv_layout(pair.key, pair.value, pageSize, kvHeads, headDim, num_pages);
    KvLayer cpu_layer = make_layer(cpu_, layout);
    KvLayer gpu_layer = make_layer(*gpu_, layout);
    fill_pages(cpu_layer, gpu_layer);
    const std::vector<std::vector<std::int32_t>> pages =
        deal_pages(lengths, pageSize, num_pages, rng_);

    // Each sequence's K/V from position 0, as prefill chunks write them.
    HostBatch content = make_tables(pages);
    for (std::size_t s = 0; s < lengths.size(); ++s)
      add_tokens(content, int(s), 0, lengths[s]);
    const std::size_t elements =
        std::size_t(content.tokens()) * std::size_t(kvHeads) * std::size_t(headDim);
    write_both(cpu_layer, gpu_layer, content, uniform(elements, -1.5f, 1.5f, rng_),
               uniform(elements, -1.0f, 1.0f, rng_));
    expect_same_pages(cpu_, cpu_layer, *gpu_, gpu_layer, "write_kv of the context");

    AttentionParams params;
    params.heads = kvHeads * group;
    params.scale = 1.0f / std::sqrt(float(headDim));
    params.sliding_window = window;
    params.softcap = softcap;

    HostBatch decode = make_tables(pages);
    for (const int s : {0, 1, 2, 4, 5})
      add_tokens(decode, s, lengths[std::size_t(s)] - 1, 1);
    attend_both(cpu_layer, gpu_layer, decode, params, "decode step");

    HostBatch chunk = make_tables(pages);
    add_tokens(chunk, 4, 45 - 7, 7);
    attend_both(cpu_layer, gpu_layer, chunk, params, "7-token chunk");

    HostBatch prefill = make_tables(pages);
    add_tokens(prefill, 0, 16, 1);
    add_tokens(prefill, 3, 300, 100);
    add_tokens(prefill, 5, 259, 1);
    attend_both(cpu_layer, gpu_layer, prefill, params, "prefill chunk over a cached prefix");
  }

 private slots:

  void pagedAttentionWithoutSplits_data() {
    QTest::addColumn<QByteArray>("coding");
    for (const char* coding : kCodings)
      QTest::addRow("%s", coding) << QByteArray(coding);
  }

  // Enough blocks to fill a GPU without cutting key ranges: 64 sequences
  // decoding at once, and a 600-token prefill with 8 query heads per K/V
  // head; the kernels then write the outputs themselves, with no merge.
  void pagedAttentionWithoutSplits() {
    QFETCH(QByteArray, coding);
    const CodingPair pair = coding_pair(coding);
    constexpr int kHeadDim = 64, kKvHeads = 8, kGroup = 8, kPageSize = 64;
    std::vector<int> lengths(64);
    for (int& length : lengths)
      length = std::uniform_int_distribution<int>(1, 200)(rng_);
    lengths[0] = 600;
    const int num_pages = pages_needed(lengths, kPageSize);
    const KvLayerLayout layout =
        make_kv_layout(pair.key, pair.value, kPageSize, kKvHeads, kHeadDim, num_pages);
    KvLayer cpu_layer = make_layer(cpu_, layout);
    KvLayer gpu_layer = make_layer(*gpu_, layout);
    const std::vector<std::vector<std::int32_t>> pages =
        deal_pages(lengths, kPageSize, num_pages, rng_);
    HostBatch content = make_tables(pages);
    for (std::size_t s = 0; s < lengths.size(); ++s)
      add_tokens(content, int(s), 0, lengths[s]);
    const std::size_t elements = std::size_t(content.tokens()) * kKvHeads * kHeadDim;
    write_both(cpu_layer, gpu_layer, content, uniform(elements, -1.5f, 1.5f, rng_),
               uniform(elements, -1.0f, 1.0f, rng_));

    AttentionParams params;
    params.heads = kKvHeads * kGroup;
    params.scale = 1.0f / std::sqrt(float(kHeadDim));
    HostBatch decode = make_tables(pages);
    for (std::size_t s = 0; s < lengths.size(); ++s)
      add_tokens(decode, int(s), lengths[s] - 1, 1);
    attend_both(cpu_layer, gpu_layer, decode, params, "64-sequence decode step");
    HostBatch prefill = make_tables(pages);
    add_tokens(prefill, 0, 0, 600);
    attend_both(cpu_layer, gpu_layer, prefill, params, "600-token prefill");
  }

  void pageCopies_data() {
    QTest::addColumn<QByteArray>("coding");
    for (const char* coding : kCodings)
      QTest::addRow("%s", coding) << QByteArray(coding);
  }

  // copy_page_tokens of a partial page (FP8: the page's scales come along),
  // save_page to host memory and restore_page of other bytes, both backends
  // from the same pages.
  void pageCopies() {
    QFETCH(QByteArray, coding);
    const CodingPair pair = coding_pair(coding);
    const KvLayerLayout layout = make_kv_layout(pair.key, pair.value, 16, 3, 64, 6);
    KvLayer cpu_layer = make_layer(cpu_, layout);
    KvLayer gpu_layer = make_layer(*gpu_, layout);
    fill_pages(cpu_layer, gpu_layer);

    for (const auto& [source, destination, tokens] :
         {std::tuple{2, 5, 7}, std::tuple{0, 1, 16}, std::tuple{4, 3, 1}, std::tuple{1, 4, 99}}) {
      cpu_.copy_page_tokens(kDevice, cpu_layer.view(), source, destination, tokens);
      gpu_->copy_page_tokens(kDevice, gpu_layer.view(), source, destination, tokens);
      expect_same_pages(cpu_, cpu_layer, *gpu_, gpu_layer, "copy_page_tokens");
    }

    const std::size_t page_bytes =
        std::size_t(layout.key_data_page_bytes + layout.key_scale_page_bytes +
                    layout.value_data_page_bytes + layout.value_scale_page_bytes);
    std::vector<std::uint8_t> saved_cpu(page_bytes, 0xa5), saved_gpu(page_bytes, 0x5a);
    cpu_.save_page(kDevice, cpu_layer.view(), 3, saved_cpu.data());
    gpu_->save_page(kDevice, gpu_layer.view(), 3, saved_gpu.data());
    QVERIFY(saved_gpu == saved_cpu);

    // Another page's bytes restored into page 0 on both sides.
    std::vector<std::uint8_t> other(page_bytes);
    cpu_.save_page(kDevice, cpu_layer.view(), 5, other.data());
    cpu_.restore_page(kDevice, cpu_layer.view(), 0, other.data());
    gpu_->restore_page(kDevice, gpu_layer.view(), 0, other.data());
    std::fill(other.begin(), other.end(), 0xff);  // the call has returned: the buffer is free
    expect_same_pages(cpu_, cpu_layer, *gpu_, gpu_layer, "restore_page");
  }

  void argumentsAreChecked() {
    const KvLayerLayout layout = make_kv_layout(KvCoding::Fp16, KvCoding::Fp16, 16, 3, 64, 2);
    KvLayer layer = make_layer(*gpu_, layout);
    HostBatch host = make_tables({{0, 1}});
    add_tokens(host, 0, 0, 3);
    GpuBatch batch = upload(host);
    DeviceBuffer query = upload(std::vector<float>(3 * 8 * 64, 0.5f));
    DeviceBuffer out = upload(std::vector<float>(3 * 8 * 64, kNaN));
    AttentionParams params{8, 0.125f, 0};  // 8 heads over 3 K/V heads
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             gpu_->paged_attention(kDevice, layer.view(), batch.view,
                                                   query.as<float>(), params, out.as<float>()));

    // head_dim 72: FP16 pages hold it, the attention kernels do not.
    const KvLayerLayout odd = make_kv_layout(KvCoding::Fp16, KvCoding::Fp16, 16, 1, 72, 2);
    KvLayer odd_layer = make_layer(*gpu_, odd);
    params = AttentionParams{2, 0.125f, 0};
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             gpu_->paged_attention(kDevice, odd_layer.view(), batch.view,
                                                   query.as<float>(), params, out.as<float>()));

    // A layout whose byte counts do not match its coding.
    KvLayerLayout wrong = layout;
    wrong.key_data_page_bytes /= 2;
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             gpu_->write_kv(kDevice, KvLayerView{wrong, layer.view().planes},
                                            batch.view, query.as<float>(), query.as<float>()));
    QVERIFY_THROWS_EXCEPTION(std::out_of_range,
                             gpu_->copy_page_tokens(kDevice, layer.view(), 0, 2, 4));
  }

 private:
  CpuBackend cpu_;
  std::unique_ptr<Backend> gpu_;
  std::mt19937 rng_;
};

QUIRE_TEST(CudaKvTest)
#include "test_cuda_kv.moc"
