// The CUDA sampling-candidate ops (top_logits, gather_logits) against the
// host reference of top_logits.h: ids, values and counts exact, the tail sum
// within kTopLogitsTailSumTolerance, on fresh random rows (the seed is
// printed) with ties, signed zeros, infinities and NaN, odd vocabulary sizes
// and k, and outputs poisoned before each run. Needs a GPU: label "gpu",
// skipped when the backend cannot run.

#include <QTest>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "cuda_test_support.h"
#include "quire/kernels/top_logits.h"
#include "test_main.h"

using namespace quire::kernels;

namespace {

constexpr int kDevice = quire::test::kCudaTestDevice;
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

enum class RowShape { Normal, Ties, MostlyMinusInfinity, Special };

std::vector<float> rows_of(std::mt19937& rng, std::int64_t rows, std::int64_t vocab,
                           RowShape shape) {
  std::vector<float> logits(static_cast<std::size_t>(rows * vocab));
  std::normal_distribution<float> normal(0.0f, 4.0f);
  for (float& logit : logits) {
    logit = normal(rng);
    switch (shape) {
      case RowShape::Normal:
        break;
      case RowShape::Ties:
        logit = std::round(logit / 4.0f);
        break;
      case RowShape::MostlyMinusInfinity:
        if (rng() % 64 != 0) logit = -kInf;
        break;
      case RowShape::Special: {
        const unsigned pick = rng() % 64;
        if (pick == 0) logit = -kInf;
        if (pick == 1) logit = kNaN;
        if (pick == 2) logit = -0.0f;
        if (pick == 3) logit = 0.0f;
        if (pick == 4 && rng() % 64 == 0) logit = kInf;
        break;
      }
    }
  }
  return logits;
}

template <typename T>
std::vector<T> download(Backend& gpu, const DeviceBuffer& buffer, std::size_t count) {
  gpu.synchronize(kDevice);
  std::vector<T> host(count);
  gpu.copy(host.data(), -1, buffer.data(), kDevice, count * sizeof(T));
  return host;
}

// All bits set: NaN floats, -1 ids and counts.
template <typename T>
DeviceBuffer poisoned(Backend& gpu, std::size_t count) {
  const std::vector<unsigned char> bytes(count * sizeof(T), 0xff);
  return quire::test::upload_raw(gpu, bytes.data(), bytes.size());
}

}  // namespace

class CudaSamplingTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QString why_not;
    gpu_ = quire::test::start_cuda_backend(rng_, why_not);
    if (!gpu_) QSKIP(qPrintable(why_not));
  }

  void cleanupTestCase() { gpu_.reset(); }

  void topLogitsMatchesTheReference_data() {
    QTest::addColumn<int>("vocab");
    QTest::addColumn<int>("rows");
    QTest::addColumn<int>("k");
    QTest::addColumn<int>("shape");
    const struct {
      int vocab, rows, k;
    } sizes[] = {{1, 1, 1},        {7, 3, 7},        {1000, 5, 1},     {1000, 2, 1000},
                 {4097, 3, 257},   {32003, 17, 64},  {32003, 4, 1024}, {151936, 3, 256},
                 {151936, 65, 50}, {262147, 2, 1023}};
    const char* shapes[] = {"normal", "ties", "mostly -inf", "special"};
    for (const auto& size : sizes) {
      for (int shape = 0; shape < 4; ++shape) {
        QTest::addRow("v%d r%d k%d %s", size.vocab, size.rows, size.k, shapes[shape])
            << size.vocab << size.rows << size.k << shape;
      }
    }
  }

  void topLogitsMatchesTheReference() {
    QFETCH(int, vocab);
    QFETCH(int, rows);
    QFETCH(int, k);
    QFETCH(int, shape);
    const std::vector<float> logits = rows_of(rng_, rows, vocab, static_cast<RowShape>(shape));
    std::vector<float> inv_temperatures(static_cast<std::size_t>(rows));
    for (float& t : inv_temperatures)
      t = 1.0f / (0.02f + static_cast<float>(rng_() % 300) / 100.0f);
    const auto outputs = static_cast<std::size_t>(rows) * static_cast<std::size_t>(k);
    std::vector<float> values(outputs);
    std::vector<std::int32_t> ids(outputs);
    std::vector<TopLogitsStats> stats(static_cast<std::size_t>(rows));
    top_logits_host(logits.data(), rows, vocab, k, inv_temperatures.data(), values.data(),
                    ids.data(), stats.data());

    const DeviceBuffer device_logits = quire::test::upload_to_gpu(*gpu_, logits);
    const DeviceBuffer device_scales = quire::test::upload_to_gpu(*gpu_, inv_temperatures);
    std::vector<TopLogitsStats> first_stats;
    for (int run = 0; run < 2; ++run) {
      const DeviceBuffer device_values = poisoned<float>(*gpu_, outputs);
      const DeviceBuffer device_ids = poisoned<std::int32_t>(*gpu_, outputs);
      const DeviceBuffer device_stats = poisoned<TopLogitsStats>(*gpu_, stats.size());
      gpu_->top_logits(kDevice, device_logits.as<float>(), rows, vocab, k,
                       device_scales.as<float>(), device_values.as<float>(),
                       device_ids.as<std::int32_t>(), device_stats.as<TopLogitsStats>());
      const auto got_values = download<float>(*gpu_, device_values, outputs);
      const auto got_ids = download<std::int32_t>(*gpu_, device_ids, outputs);
      const auto got_stats = download<TopLogitsStats>(*gpu_, device_stats, stats.size());
      for (std::size_t i = 0; i < outputs; ++i) {
        QVERIFY2(got_ids[i] == ids[i],
                 qPrintable(QStringLiteral("entry %1: id %2 on the GPU, %3 on the host")
                                .arg(i)
                                .arg(got_ids[i])
                                .arg(ids[i])));
        QVERIFY(std::memcmp(&got_values[i], &values[i], sizeof(float)) == 0);
      }
      for (std::size_t r = 0; r < stats.size(); ++r) {
        QCOMPARE(got_stats[r].finite, stats[r].finite);
        QCOMPARE(got_stats[r].nans, stats[r].nans);
        const double expected = stats[r].tail_sum;
        const double limit = kTopLogitsTailSumTolerance * expected + 1e-37;
        QVERIFY2(std::fabs(double(got_stats[r].tail_sum) - expected) <= limit,
                 qPrintable(QStringLiteral("row %1: tail sum %2 on the GPU, %3 on the host")
                                .arg(r)
                                .arg(double(got_stats[r].tail_sum), 0, 'g', 9)
                                .arg(expected, 0, 'g', 9)));
      }
      // A fixed reduction order: the second run gives the same bits.
      if (run == 0) {
        first_stats = got_stats;
      } else {
        for (std::size_t r = 0; r < stats.size(); ++r)
          QCOMPARE(got_stats[r].tail_sum, first_stats[r].tail_sum);
      }
    }
  }

  void gatherLogitsPicksAndMarksOutsiders() {
    const std::int64_t rows = 3, vocab = 50021;
    const std::vector<float> logits = rows_of(rng_, rows, vocab, RowShape::Special);
    std::vector<std::int32_t> gather_rows, gather_ids;
    for (int i = 0; i < 3001; ++i) {
      gather_rows.push_back(static_cast<std::int32_t>(rng_() % (rows + 1)) - (i % 97 == 0));
      gather_ids.push_back(static_cast<std::int32_t>(rng_() % (vocab + 2)) - 1);
    }
    std::vector<float> expected(gather_rows.size());
    gather_logits_host(logits.data(), rows, vocab, gather_rows.data(), gather_ids.data(),
                       static_cast<std::int64_t>(gather_rows.size()), expected.data());
    const DeviceBuffer device_logits = quire::test::upload_to_gpu(*gpu_, logits);
    const DeviceBuffer device_rows = quire::test::upload_to_gpu(*gpu_, gather_rows);
    const DeviceBuffer device_ids = quire::test::upload_to_gpu(*gpu_, gather_ids);
    const DeviceBuffer out = poisoned<float>(*gpu_, expected.size());
    gpu_->gather_logits(kDevice, device_logits.as<float>(), rows, vocab,
                        device_rows.as<std::int32_t>(), device_ids.as<std::int32_t>(),
                        static_cast<std::int64_t>(expected.size()), out.as<float>());
    const auto got = download<float>(*gpu_, out, expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
      if (std::isnan(expected[i])) {
        QVERIFY(std::isnan(got[i]));
      } else {
        QVERIFY(std::memcmp(&got[i], &expected[i], sizeof(float)) == 0);
      }
    }
  }

 private:
  std::unique_ptr<Backend> gpu_;
  std::mt19937 rng_;
};

QUIRE_TEST(CudaSamplingTest)
#include "test_cuda_sampling.moc"
