// The sampling candidates of a row (top_logits.h): the host reference against
// a brute-force ranking on rows full of ties, signed zeros, infinities and
// NaN; the CPU backend's op and Backend's default (through host copies)
// against the reference; and the argument checks.

#include <QTest>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <stdexcept>
#include <vector>

#include "quire/kernels/cpu/cpu_backend.h"
#include "quire/kernels/top_logits.h"
#include "test_main.h"

using namespace quire::kernels;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

std::vector<float> random_rows(std::mt19937& rng, std::int64_t rows, std::int64_t vocab) {
  std::vector<float> logits(static_cast<std::size_t>(rows * vocab));
  std::normal_distribution<float> normal(0.0f, 3.0f);
  for (float& logit : logits) {
    logit = normal(rng);
    switch (rng() % 16) {
      case 0:
        logit = std::round(logit);
        break;  // ties
      case 1:
        logit = -kInf;
        break;
      case 2:
        logit = rng() % 2 ? 0.0f : -0.0f;
        break;
      default:
        break;
    }
    if (rng() % 500 == 0) logit = kInf;
    if (rng() % 500 == 0) logit = kNaN;
  }
  return logits;
}

// The whole row ranked by float comparison, NaN last, ties to the lower id.
std::vector<std::int32_t> brute_ranking(const float* row, std::int64_t vocab) {
  std::vector<std::int32_t> order(static_cast<std::size_t>(vocab));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [row](std::int32_t a, std::int32_t b) {
    const float x = row[a], y = row[b];
    if (std::isnan(x) || std::isnan(y)) return !std::isnan(x) && std::isnan(y);
    return x > y;
  });
  return order;
}

// Memory and copies through a CPU backend, the other ops empty, and the two
// under test left to Backend's defaults (host copies around the reference).
class DefaultOpsBackend final : public Backend {
 public:
  std::string name() const override { return "default-ops"; }
  std::vector<DeviceInfo> devices() const override { return cpu_.devices(); }
  DeviceBuffer allocate(int device, std::size_t bytes, std::string_view purpose) override {
    return cpu_.allocate(device, bytes, purpose);
  }
  void copy(void* destination, int destination_device, const void* source, int source_device,
            std::size_t bytes) override {
    ++copies;
    cpu_.copy(destination, destination_device, source, source_device, bytes);
  }
  void fill_zero(int device, void* data, std::size_t bytes) override {
    cpu_.fill_zero(device, data, bytes);
  }
  void synchronize(int device) override { cpu_.synchronize(device); }
  void embedding(int, const DenseWeight&, std::int64_t, std::int64_t, const std::int32_t*,
                 std::int64_t, float*) override {}
  void rms_norm(int, const float*, const DenseWeight&, float, std::int64_t, std::int64_t,
                float*) override {}
  void linear(int, const float*, std::int64_t, const LinearWeight&, float*, ProductRows) override {}
  void rope(int, float*, std::int64_t, int, int, const std::int32_t*, const RopeParams&) override {}
  void gated_activation(int, GatedActivation, const float*, const float*, std::int64_t,
                        float*) override {}
  void add(int, float*, const float*, std::int64_t) override {}
  void soft_cap(int, float*, std::int64_t, float) override {}
  void scale(int, float*, std::int64_t, float) override {}
  void copy_columns(int, const float*, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                    float*) override {}
  void gather_rows(int, const float*, std::int64_t, const std::int32_t*, std::int64_t,
                   float*) override {}
  void scatter_add_rows(int, float*, std::int64_t, const float*, const std::int32_t*, const float*,
                        std::int64_t) override {}
  void write_kv(int, const KvLayerView&, const TokenBatch&, const float*, const float*) override {}
  void paged_attention(int, const KvLayerView&, const TokenBatch&, const float*,
                       const AttentionParams&, float*) override {}
  void copy_page_tokens(int, const KvLayerView&, int, int, int) override {}
  void fill_mirror(int, const KvLayerView&, int, int, int) override {}
  void save_page(int, const KvLayerView&, int, void*) override {}
  void restore_page(int, const KvLayerView&, int, const void*) override {}

  int copies = 0;

 protected:
  void release(int, void*, std::size_t) noexcept override {}

 private:
  CpuBackend cpu_;
};

struct Outputs {
  std::vector<float> values;
  std::vector<std::int32_t> ids;
  std::vector<TopLogitsStats> stats;

  Outputs(std::int64_t rows, int k)
      : values(static_cast<std::size_t>(rows * k), kNaN),
        ids(static_cast<std::size_t>(rows * k), -7),
        stats(static_cast<std::size_t>(rows), TopLogitsStats{kNaN, -7, -7, 0}) {}
};

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](float x, float y) {
           return std::memcmp(&x, &y, sizeof(float)) == 0;
         });
}

}  // namespace

class TopLogitsTest : public QObject {
  Q_OBJECT

 private slots:
  void referenceRanksLikeABruteForceSort() {
    std::mt19937 rng(11);
    for (int trial = 0; trial < 300; ++trial) {
      const std::int64_t vocab = 1 + static_cast<std::int64_t>(rng() % 3000);
      const std::int64_t rows = 1 + static_cast<std::int64_t>(rng() % 3);
      const int k = 1 + static_cast<int>(rng() % std::min<std::int64_t>(vocab, kMaxTopLogits));
      const std::vector<float> logits = random_rows(rng, rows, vocab);
      std::vector<float> inv_temperatures(static_cast<std::size_t>(rows));
      for (float& t : inv_temperatures)
        t = 1.0f / (0.05f + static_cast<float>(rng() % 200) / 100.0f);
      Outputs out(rows, k);
      top_logits_host(logits.data(), rows, vocab, k, inv_temperatures.data(), out.values.data(),
                      out.ids.data(), out.stats.data());
      for (std::int64_t r = 0; r < rows; ++r) {
        const float* row = logits.data() + r * vocab;
        const std::vector<std::int32_t> ranking = brute_ranking(row, vocab);
        for (int j = 0; j < k; ++j) {
          const auto at = static_cast<std::size_t>(r * k + j);
          QCOMPARE(out.ids[at], ranking[std::size_t(j)]);
          QVERIFY(std::memcmp(&out.values[at], &row[ranking[std::size_t(j)]], 4) == 0);
        }
        std::int32_t finite = 0, nans = 0;
        long double tail = 0;
        const float maximum = row[ranking[0]];
        for (std::int64_t j = 0; j < vocab; ++j) {
          const float logit = row[ranking[std::size_t(j)]];
          if (std::isnan(logit)) ++nans;
          if (!std::isnan(logit) && logit != -kInf) {
            ++finite;
            if (j >= k && std::isfinite(maximum)) {
              tail += std::exp(
                  static_cast<long double>((logit - maximum) * inv_temperatures[std::size_t(r)]));
            }
          }
        }
        const TopLogitsStats& s = out.stats[std::size_t(r)];
        QCOMPARE(s.finite, finite);
        QCOMPARE(s.nans, nans);
        QVERIFY2(
            std::fabs(static_cast<long double>(s.tail_sum) - tail) <= 1e-6L * tail + 1e-30L,
            qPrintable(QString::number(double(s.tail_sum)) + " " + QString::number(double(tail))));
      }
    }
  }

  void signedZerosTieByIdAndNaNRanksLast() {
    const std::vector<float> row{-0.0f, kNaN, 0.0f, -kInf, -0.0f, 1.0f};
    const float inv_temperature = 1.0f;
    Outputs out(1, 6);
    top_logits_host(row.data(), 1, 6, 6, &inv_temperature, out.values.data(), out.ids.data(),
                    out.stats.data());
    QCOMPARE(out.ids, (std::vector<std::int32_t>{5, 0, 2, 4, 3, 1}));
    QCOMPARE(out.stats[0].finite, 4);
    QCOMPARE(out.stats[0].nans, 1);
    QCOMPARE(out.stats[0].tail_sum, 0.0f);  // nothing ranks after k = vocab
  }

  void cpuBackendAndDefaultMatchTheReference() {
    std::mt19937 rng(12);
    CpuBackend cpu;
    DefaultOpsBackend fallback;
    for (const std::int64_t vocab : {1, 5, 1000, 32003}) {
      const std::int64_t rows = 5;
      const int k = static_cast<int>(std::min<std::int64_t>(vocab, 37));
      const std::vector<float> logits = random_rows(rng, rows, vocab);
      const std::vector<float> inv_temperatures{1.0f, 2.0f, 0.5f, 10.0f, 1.25f};
      Outputs expected(rows, k), on_cpu(rows, k), by_default(rows, k);
      top_logits_host(logits.data(), rows, vocab, k, inv_temperatures.data(),
                      expected.values.data(), expected.ids.data(), expected.stats.data());
      cpu.top_logits(0, logits.data(), rows, vocab, k, inv_temperatures.data(),
                     on_cpu.values.data(), on_cpu.ids.data(), on_cpu.stats.data());
      fallback.top_logits(0, logits.data(), rows, vocab, k, inv_temperatures.data(),
                          by_default.values.data(), by_default.ids.data(), by_default.stats.data());
      for (const Outputs* out : {&on_cpu, &by_default}) {
        QVERIFY(same_bits(out->values, expected.values));
        QCOMPARE(out->ids, expected.ids);
        for (std::size_t r = 0; r < expected.stats.size(); ++r) {
          QCOMPARE(out->stats[r].finite, expected.stats[r].finite);
          QCOMPARE(out->stats[r].nans, expected.stats[r].nans);
          QCOMPARE(out->stats[r].tail_sum, expected.stats[r].tail_sum);
        }
      }

      const std::vector<std::int32_t> gather_rows{0, 4, 2, 5, -1, 3};
      const std::vector<std::int32_t> gather_ids{0, static_cast<std::int32_t>(vocab - 1), 0, 0,
                                                 0, static_cast<std::int32_t>(vocab)};
      std::vector<float> gathered(6, 1.0f), gathered_default(6, 1.0f);
      cpu.gather_logits(0, logits.data(), rows, vocab, gather_rows.data(), gather_ids.data(), 6,
                        gathered.data());
      fallback.gather_logits(0, logits.data(), rows, vocab, gather_rows.data(), gather_ids.data(),
                             6, gathered_default.data());
      QVERIFY(same_bits(gathered, gathered_default));
      QVERIFY(std::memcmp(&gathered[1], &logits[std::size_t(4 * vocab + vocab - 1)], 4) == 0);
      QVERIFY(std::memcmp(&gathered[2], &logits[std::size_t(2 * vocab)], 4) == 0);
      for (const std::size_t outside : {3, 4, 5})
        QVERIFY(std::isnan(gathered[outside]));
    }
    QVERIFY(fallback.copies > 0);
  }

  void badArgumentsAreRefused() {
    CpuBackend cpu;
    const std::vector<float> logits(10, 1.0f);
    const float inv_temperature = 1.0f;
    Outputs out(1, 11);
    for (const int k : {0, 11, kMaxTopLogits + 1}) {
      QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                               cpu.top_logits(0, logits.data(), 1, 10, k, &inv_temperature,
                                              out.values.data(), out.ids.data(), out.stats.data()));
    }
  }
};

QUIRE_TEST(TopLogitsTest)
#include "test_top_logits.moc"
