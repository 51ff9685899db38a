// The residual window's FP16 mirrors (KvMirrors) on the CUDA backend against
// the CPU backend, for every coding: write_kv with mirrored pages (coded pages
// and mirrors byte for byte), fill_mirror byte for byte, and paged attention
// that reads the mirrored pages from their mirrors, within test_cuda_kv's
// tolerance. Part of the ops suite: label "gpu", skipped without a backend.

#include <QTest>
#include <memory>
#include <random>
#include <vector>

#include "cuda_kv_test_support.h"
#include "cuda_test_support.h"
#include "quire/kernels/cpu/cpu_backend.h"
#include "test_main.h"

using namespace quire::kernels;
using namespace quire::test::cuda_kv;

namespace {

constexpr int kPageSize = 16, kKvHeads = 2, kHeadDim = 128, kPages = 24, kSlots = 3, kGroup = 4;

// A layer's pages and its mirrors on one backend.
struct MirroredLayer {
  KvLayer pages;
  DeviceBuffer key_mirror, value_mirror;
  std::int64_t mirror_bytes() const {
    return kv_mirror_page_bytes(kPageSize, kKvHeads, kHeadDim) * kSlots;
  }
  KvLayerView view() const {
    KvLayerView view = pages.view();
    view.mirrors = KvMirrors{key_mirror.data(), value_mirror.data(), kSlots};
    return view;
  }
};

MirroredLayer make_mirrored(Backend& backend, const QByteArray& coding) {
  const CodingPair pair = coding_pair(coding);
  MirroredLayer layer{make_layer(backend, make_kv_layout(pair.key, pair.value, kPageSize, kKvHeads,
                                                         kHeadDim, kPages)),
                      {},
                      {}};
  const auto bytes = std::size_t(layer.mirror_bytes());
  layer.key_mirror = backend.allocate(kDevice, bytes, "test mirrors");
  layer.value_mirror = backend.allocate(kDevice, bytes, "test mirrors");
  const std::vector<std::uint8_t> poison(bytes, 0xff);  // FP16 NaNs
  for (const DeviceBuffer* buffer : {&layer.key_mirror, &layer.value_mirror})
    backend.copy(buffer->data(), kDevice, poison.data(), -1, bytes);
  return layer;
}

}  // namespace

class CudaKvMirrorsTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QString why_not;
    gpu_ = quire::test::start_cuda_backend(rng_, why_not);
    if (!gpu_) QSKIP(qPrintable(why_not));
  }
  void cleanupTestCase() { gpu_.reset(); }

  void mirrorsMatchTheCpu_data() {
    QTest::addColumn<QByteArray>("coding");
    for (const char* coding : kCodings)
      QTest::newRow(coding) << QByteArray(coding);
  }

  // Three sequences of 40, 23 and 9 tokens (open pages of 8, 7 and 9 tokens)
  // written as a 33-token chunk and then single tokens, each mirroring its
  // open page; the second sequence's earlier tokens go into its mirror by
  // fill_mirror. Then a decode step over all three.
  void mirrorsMatchTheCpu() {
    QFETCH(QByteArray, coding);
    MirroredLayer cpu_layer = make_mirrored(cpu_, coding);
    MirroredLayer gpu_layer = make_mirrored(*gpu_, coding);
    const std::vector<std::vector<std::int32_t>> pages{{3, 11, 7}, {0, 19}, {5}};
    HostBatch chunk = make_tables(pages);
    add_tokens(chunk, 0, 0, 33);
    add_tokens(chunk, 1, 0, 20);
    add_tokens(chunk, 2, 0, 5);
    HostBatch tail = make_tables(pages);
    add_tokens(tail, 0, 33, 7);
    add_tokens(tail, 1, 20, 3);
    add_tokens(tail, 2, 5, 4);
    // (page-table index, slot) per sequence; sequence 1 has none in the chunk.
    const std::vector<std::int32_t> chunk_mirrors{2, 2, -1, 0, 0, 1};
    const std::vector<std::int32_t> tail_mirrors{2, 2, 1, 0, 0, 1};

    for (const auto& [batch, mirrors] :
         {std::pair{&chunk, &chunk_mirrors}, {&tail, &tail_mirrors}}) {
      if (batch == &tail) {
        cpu_.fill_mirror(kDevice, cpu_layer.view(), 19, 0, 4);
        gpu_->fill_mirror(kDevice, gpu_layer.view(), 19, 0, 4);
      }
      const std::size_t count = std::size_t(batch->tokens()) * kKvHeads * kHeadDim;
      const std::vector<float> key = uniform(count, -1.5f, 1.5f, rng_);
      const std::vector<float> value = uniform(count, -1.0f, 1.0f, rng_);
      TokenBatch host = batch->view();
      host.mirrored = mirrors->data();
      cpu_.write_kv(kDevice, cpu_layer.view(), host, key.data(), value.data());
      DeviceBuffer sequence = quire::test::upload_to_gpu(*gpu_, batch->sequence);
      DeviceBuffer position = quire::test::upload_to_gpu(*gpu_, batch->position);
      DeviceBuffer tables = quire::test::upload_to_gpu(*gpu_, batch->tables);
      DeviceBuffer mirrored = quire::test::upload_to_gpu(*gpu_, *mirrors);
      DeviceBuffer key_gpu = quire::test::upload_to_gpu(*gpu_, key);
      DeviceBuffer value_gpu = quire::test::upload_to_gpu(*gpu_, value);
      TokenBatch device{sequence.as<std::int32_t>(), position.as<std::int32_t>(),
                        tables.as<std::int32_t>(), batch->tokens(), batch->max_pages};
      device.mirrored = mirrored.as<std::int32_t>();
      gpu_->write_kv(kDevice, gpu_layer.view(), device, key_gpu.as<float>(), value_gpu.as<float>());
      gpu_->synchronize(kDevice);
    }
    expect_same_pages(cpu_, cpu_layer.pages, *gpu_, gpu_layer.pages, "pages");
    for (const auto& [cpu_mirror, gpu_mirror] :
         {std::pair{&cpu_layer.key_mirror, &gpu_layer.key_mirror},
          std::pair{&cpu_layer.value_mirror, &gpu_layer.value_mirror}}) {
      const std::vector<std::uint8_t> expected =
          download(cpu_, *cpu_mirror, cpu_layer.mirror_bytes());
      const std::vector<std::uint8_t> actual =
          download(*gpu_, *gpu_mirror, gpu_layer.mirror_bytes());
      // Only the slots' written tokens are compared: the rest is poison on both.
      QVERIFY(expected == actual);
    }

    HostBatch step = make_tables(pages);
    add_tokens(step, 0, 39, 1);
    add_tokens(step, 1, 22, 1);
    add_tokens(step, 2, 8, 1);
    const std::size_t count = 3 * std::size_t(kKvHeads * kGroup) * kHeadDim;
    const std::vector<float> query = uniform(count, -3.0f, 3.0f, rng_);
    const AttentionParams params{kKvHeads * kGroup, 0.088f};
    std::vector<float> expected(count, kNaN);
    TokenBatch host = step.view();
    host.mirrored = tail_mirrors.data();
    cpu_.paged_attention(kDevice, cpu_layer.view(), host, query.data(), params, expected.data());
    DeviceBuffer sequence = quire::test::upload_to_gpu(*gpu_, step.sequence);
    DeviceBuffer position = quire::test::upload_to_gpu(*gpu_, step.position);
    DeviceBuffer tables = quire::test::upload_to_gpu(*gpu_, step.tables);
    DeviceBuffer mirrored = quire::test::upload_to_gpu(*gpu_, tail_mirrors);
    DeviceBuffer query_gpu = quire::test::upload_to_gpu(*gpu_, query);
    DeviceBuffer out = quire::test::upload_to_gpu(*gpu_, std::vector<float>(count, kNaN));
    TokenBatch device{sequence.as<std::int32_t>(), position.as<std::int32_t>(),
                      tables.as<std::int32_t>(), 3, step.max_pages};
    device.mirrored = mirrored.as<std::int32_t>();
    gpu_->paged_attention(kDevice, gpu_layer.view(), device, query_gpu.as<float>(), params,
                          out.as<float>());
    expect_close(expected, quire::test::download_floats(*gpu_, out, count), "attention");
  }

 private:
  CpuBackend cpu_;
  std::unique_ptr<Backend> gpu_;
  std::mt19937 rng_;
};

QUIRE_TEST(CudaKvMirrorsTest)
#include "test_cuda_kv_mirrors.moc"
