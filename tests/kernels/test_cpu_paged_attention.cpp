// K/V writes and paged attention of the CPU backend, for every cache coding:
// the stored pages are decoded independently and attention over the decoded
// values, computed plainly in double precision, is the reference.

#include <QTest>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <stdexcept>
#include <vector>

#include "kv_test_support.h"
#include "quire/kernels/cpu/cache_quant.h"
#include "quire/kernels/cpu/cpu_backend.h"
#include "test_main.h"

using namespace quire::kernels;

Q_DECLARE_METATYPE(KvCoding)

namespace {

constexpr int kPageSize = 4, kKvHeads = 2, kHeadDim = 64, kPages = 10, kHeads = 4;

// Small pages, so that a few tokens span several.
quire::test::KvStorage make_storage(KvCoding key, KvCoding value) {
  return quire::test::KvStorage(make_kv_layout(key, value, kPageSize, kKvHeads, kHeadDim, kPages));
}

// Head vectors of K or V for (sequence, position, kv head), with an outlier channel.
float source_value(int sequence, int position, int head, int dim, bool key) {
  std::mt19937 rng(std::uint32_t(sequence * 100000 + position * 1000 + head * 100 + dim * 2 + key));
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const float value = normal(rng);
  return dim == 5 ? value * 12.0f : value;
}

struct Token {
  int sequence;
  int position;
};

}  // namespace

class CpuPagedAttentionTest : public QObject {
  Q_OBJECT

 private slots:
  void attentionOverEveryCoding_data() {
    QTest::addColumn<KvCoding>("keyCoding");
    QTest::addColumn<KvCoding>("valueCoding");
    QTest::addColumn<double>("storeTolerance");
    QTest::addColumn<int>("window");
    QTest::addColumn<float>("softcap");
    // A cap of 2 bends most scores here (about 1.8 apart, with the outlier
    // channel), so a kernel that skipped it would miss by far.
    for (const float softcap : {0.0f, 2.0f}) {
      for (const int window : {0, 3}) {
        const QByteArray suffix =
            QByteArray(window ? " window 3" : "") + (softcap > 0.0f ? " softcap 2" : "");
        QTest::newRow("fp16" + suffix)
            << KvCoding::Fp16 << KvCoding::Fp16 << 2e-3 << window << softcap;
        QTest::newRow("q8" + suffix)
            << KvCoding::Int8 << KvCoding::Int8 << 0.03 << window << softcap;
        QTest::newRow("q6" + suffix)
            << KvCoding::Int8 << KvCoding::Int4 << 0.5 << window << softcap;
        QTest::newRow("q4" + suffix)
            << KvCoding::Int4 << KvCoding::Int4 << 0.5 << window << softcap;
        QTest::newRow("fp8" + suffix) << KvCoding::Fp8 << KvCoding::Fp8 << 0.8 << window << softcap;
      }
    }
  }

  void attentionOverEveryCoding() {
    QFETCH(KvCoding, keyCoding);
    QFETCH(KvCoding, valueCoding);
    QFETCH(double, storeTolerance);
    QFETCH(int, window);
    QFETCH(float, softcap);
    CpuBackend backend;
    quire::test::KvStorage storage = make_storage(keyCoding, valueCoding);
    // Two sequences with scattered pages; max_pages 3.
    const std::vector<std::int32_t> tables{7, 2, 5, 0, 9, -1};
    const int lengths[] = {11, 7};

    // Writes in several batches: a prefill chunk, a mixed batch, single tokens.
    const std::vector<std::vector<Token>> batches{
        {{0, 0}, {0, 1}, {0, 2}, {0, 3}, {0, 4}, {0, 5}, {0, 6}, {0, 7}},
        {{1, 0}, {1, 1}, {1, 2}, {1, 3}, {1, 4}, {1, 5}, {0, 8}},
        {{0, 9}},
        {{1, 6}, {0, 10}},
    };
    for (const std::vector<Token>& tokens : batches) {
      std::vector<std::int32_t> sequence, position;
      std::vector<float> keys, values;
      for (const Token& token : tokens) {
        sequence.push_back(token.sequence);
        position.push_back(token.position);
        for (int h = 0; h < kKvHeads; ++h) {
          for (int d = 0; d < kHeadDim; ++d) {
            keys.push_back(source_value(token.sequence, token.position, h, d, true));
            values.push_back(source_value(token.sequence, token.position, h, d, false));
          }
        }
      }
      const TokenBatch batch{sequence.data(), position.data(), tables.data(),
                             std::int64_t(tokens.size()), 3};
      backend.write_kv(0, storage.view, batch, keys.data(), values.data());
    }

    // Decode what was stored; it must be close to what was written.
    std::vector<std::vector<float>> stored_keys, stored_values;  // [seq][pos * kv + h][dim]
    for (int s = 0; s < 2; ++s) {
      std::vector<float> k, v;
      for (int p = 0; p < lengths[s]; ++p) {
        const int page = tables[std::size_t(s * 3 + p / kPageSize)];
        for (int h = 0; h < kKvHeads; ++h) {
          const std::vector<float> dk =
              quire::test::decode_stored(storage, true, page, p % kPageSize, h);
          const std::vector<float> dv =
              quire::test::decode_stored(storage, false, page, p % kPageSize, h);
          for (int d = 0; d < kHeadDim; ++d) {
            QVERIFY(std::fabs(dk[std::size_t(d)] - source_value(s, p, h, d, true)) <
                    storeTolerance * 12);
            QVERIFY(std::fabs(dv[std::size_t(d)] - source_value(s, p, h, d, false)) <
                    storeTolerance * 12);
          }
          k.insert(k.end(), dk.begin(), dk.end());
          v.insert(v.end(), dv.begin(), dv.end());
        }
      }
      stored_keys.push_back(std::move(k));
      stored_values.push_back(std::move(v));
    }

    // Queries at several positions of both sequences, in one batch.
    const std::vector<Token> queries{{0, 10}, {1, 6}, {0, 5}, {0, 0}, {1, 3}};
    std::vector<std::int32_t> sequence, position;
    std::vector<float> q;
    std::mt19937 rng(99);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (const Token& token : queries) {
      sequence.push_back(token.sequence);
      position.push_back(token.position);
      for (int i = 0; i < kHeads * kHeadDim; ++i)
        q.push_back(normal(rng));
    }
    const TokenBatch batch{sequence.data(), position.data(), tables.data(),
                           std::int64_t(queries.size()), 3};
    const float scale = 1.0f / std::sqrt(float(kHeadDim));
    std::vector<float> out(q.size(), std::nanf(""));
    backend.paged_attention(0, storage.view, batch, q.data(),
                            AttentionParams{kHeads, scale, window, softcap}, out.data());
    if (softcap == 0.0f) {
      // A cap of 0 is no cap: the same bits as parameters that never name one.
      std::vector<float> uncapped(q.size(), std::nanf(""));
      backend.paged_attention(0, storage.view, batch, q.data(),
                              AttentionParams{kHeads, scale, window}, uncapped.data());
      QVERIFY(std::memcmp(uncapped.data(), out.data(), out.size() * sizeof(float)) == 0);
    }

    for (std::size_t t = 0; t < queries.size(); ++t) {
      const int s = queries[t].sequence, last = queries[t].position;
      const int first = window ? std::max(0, last - window + 1) : 0;
      for (int head = 0; head < kHeads; ++head) {
        const int kv = head / (kHeads / kKvHeads);
        const float* query = q.data() + (t * kHeads + std::size_t(head)) * kHeadDim;
        std::vector<double> scores;
        double maximum = -1e300;
        for (int p = first; p <= last; ++p) {
          const float* key = stored_keys[std::size_t(s)].data() + (p * kKvHeads + kv) * kHeadDim;
          double dot = 0;
          for (int d = 0; d < kHeadDim; ++d)
            dot += double(query[d]) * key[d];
          const double score = dot * scale;
          scores.push_back(softcap > 0.0f ? softcap * std::tanh(score / softcap) : score);
          maximum = std::max(maximum, scores.back());
        }
        double total = 0;
        for (double& score : scores)
          total += (score = std::exp(score - maximum));
        for (int d = 0; d < kHeadDim; ++d) {
          double expected = 0;
          for (int p = first; p <= last; ++p) {
            expected +=
                scores[std::size_t(p - first)] / total *
                stored_values[std::size_t(s)][std::size_t((p * kKvHeads + kv) * kHeadDim + d)];
          }
          const float actual = out[(t * kHeads + std::size_t(head)) * kHeadDim + std::size_t(d)];
          QVERIFY2(std::fabs(actual - expected) < 1e-4 * (1 + std::fabs(expected)),
                   qPrintable(QString("token %1 head %2 dim %3: %4 vs %5")
                                  .arg(t)
                                  .arg(head)
                                  .arg(d)
                                  .arg(actual)
                                  .arg(expected)));
        }
      }
    }
  }

  void fp8PageStartsAfreshAtSlotZero() {
    CpuBackend backend;
    quire::test::KvStorage storage = make_storage(KvCoding::Fp8, KvCoding::Fp8);
    const std::vector<std::int32_t> table{3};
    auto write = [&](int position, float magnitude) {
      const std::int32_t sequence = 0;
      std::vector<float> values(kKvHeads * kHeadDim, magnitude);
      const TokenBatch batch{&sequence, &position, table.data(), 1, 1};
      backend.write_kv(0, storage.view, batch, values.data(), values.data());
    };
    const float* scales = reinterpret_cast<const float*>(
        storage.key_scales.data() + 3 * storage.view.layout.key_scale_page_bytes);
    write(0, 1000.0f);
    QCOMPARE(scales[0], fp8_scale_for(1000.0f));
    write(1, 3000.0f);  // grows, re-encoding slot 0
    QCOMPARE(scales[0], fp8_scale_for(3000.0f));
    write(0, 0.5f);  // the page is reused: its scale restarts
    QCOMPARE(scales[0], fp8_scale_for(0.5f));
  }

  void pageCopiesAndHostRoundTrips() {
    CpuBackend backend;
    for (const KvCoding coding : {KvCoding::Fp16, KvCoding::Int4, KvCoding::Fp8}) {
      quire::test::KvStorage storage = make_storage(coding, coding);
      std::mt19937 rng(1);
      for (auto* plane :
           {&storage.key_data, &storage.key_scales, &storage.value_data, &storage.value_scales}) {
        for (std::uint8_t& byte : *plane)
          byte = std::uint8_t(rng());
      }
      const quire::test::KvStorage before = storage;
      backend.copy_page_tokens(0, storage.view, 2, 6, 3);
      const KvLayerLayout& l = storage.view.layout;
      const std::int64_t token_bytes = l.key_data_page_bytes / kPageSize;
      QVERIFY(std::equal(storage.key_data.begin() + 6 * l.key_data_page_bytes,
                         storage.key_data.begin() + 6 * l.key_data_page_bytes + 3 * token_bytes,
                         before.key_data.begin() + 2 * l.key_data_page_bytes));
      // The fourth slot of the destination is untouched.
      QVERIFY(std::equal(storage.key_data.begin() + 6 * l.key_data_page_bytes + 3 * token_bytes,
                         storage.key_data.begin() + 7 * l.key_data_page_bytes,
                         before.key_data.begin() + 6 * l.key_data_page_bytes + 3 * token_bytes));

      const std::int64_t page_bytes = l.key_data_page_bytes + l.key_scale_page_bytes +
                                      l.value_data_page_bytes + l.value_scale_page_bytes;
      std::vector<std::uint8_t> host(static_cast<std::size_t>(page_bytes));
      backend.save_page(0, storage.view, 4, host.data());
      backend.restore_page(0, storage.view, 8, host.data());
      for (auto [data, page_size] : {std::pair{&storage.key_data, l.key_data_page_bytes},
                                     std::pair{&storage.value_scales, l.value_scale_page_bytes}}) {
        QVERIFY(std::equal(data->begin() + 8 * page_size, data->begin() + 9 * page_size,
                           data->begin() + 4 * page_size));
      }
    }
  }

  // Every backend checks the layouts it is handed with check_kv_layout: a
  // layout whose sizes do not add up is refused with the field named.
  void layoutsThatDoNotAddUpAreRefused() {
    const KvLayerLayout good = make_kv_layout(KvCoding::Int8, KvCoding::Int4, 4, 2, 64, 10);
    check_kv_layout(good);
    const auto refused = [](const KvLayerLayout& layout) -> QString {
      try {
        check_kv_layout(layout);
      } catch (const std::invalid_argument& error) {
        return QString::fromUtf8(error.what());
      }
      return QString();
    };
    KvLayerLayout no_pages = good;
    no_pages.num_pages = 0;
    QCOMPARE(refused(no_pages),
             QStringLiteral("K/V layout: page size, heads, head_dim and pages must be positive"));
    QCOMPARE(refused(make_kv_layout(KvCoding::Int4, KvCoding::Fp16, 4, 2, 48, 10)),
             QStringLiteral("quantized K/V needs head_dim divisible by 32"));
    KvLayerLayout short_values = good;
    short_values.value_data_page_bytes -= 1;
    QCOMPARE(refused(short_values),
             QStringLiteral("K/V layout: value data is 255 bytes per page, expected 256"));
    KvLayerLayout no_scales = good;
    no_scales.key_scale_page_bytes = 0;
    QCOMPARE(refused(no_scales),
             QStringLiteral("K/V layout: key scales is 0 bytes per page, expected 32"));
    // The CPU backend's ops refuse it too.
    CpuBackend backend;
    quire::test::KvStorage storage = make_storage(KvCoding::Int8, KvCoding::Int4);
    storage.view.layout.key_scale_page_bytes = 0;
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             backend.copy_page_tokens(0, storage.view, 0, 1, 1));
  }
};

QUIRE_TEST(CpuPagedAttentionTest)
#include "test_cpu_paged_attention.moc"
