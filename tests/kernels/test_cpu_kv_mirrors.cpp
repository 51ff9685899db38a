// The residual window's FP16 mirrors on the CPU backend (KvMirrors): writes
// leave the coded pages exactly as they are without mirrors, attention reads
// the mirrored page in FP16 and every other page as coded, and fill_mirror
// gives a mirror the tokens written before it. The reference decodes the
// pages independently (kv_test_support) and rounds mirrored vectors to FP16
// in the coding's stored domain (rotated groups for the integer codings).

#include <QTest>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <stdexcept>
#include <vector>

#include "kv_test_support.h"
#include "quire/kernels/cpu/cpu_backend.h"
#include "quire/kernels/cpu/hadamard.h"
#include "quire/kernels/cpu/half.h"
#include "test_main.h"

using namespace quire::kernels;

Q_DECLARE_METATYPE(KvCoding)

namespace {

constexpr int kPageSize = 4, kKvHeads = 2, kHeadDim = 64, kPages = 10, kHeads = 4, kSlots = 2;
constexpr int kMaxPages = 3;
// Two sequences with scattered pages; sequence 0 holds 11 tokens (its third
// page open, 3 tokens), sequence 1 holds 7 (its second page open).
const std::vector<std::int32_t> kTables{7, 2, 5, 0, 9, -1};
constexpr int kLengths[] = {11, 7};
// Per sequence: (page-table index, mirror slot).
const std::vector<std::int32_t> kMirrored{2, 1, 1, 0};

float source_value(int sequence, int position, int head, int dim, bool key) {
  std::mt19937 rng(std::uint32_t(sequence * 100000 + position * 1000 + head * 100 + dim * 2 + key));
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const float value = normal(rng);
  return dim == 5 ? value * 12.0f : value;  // an outlier channel, as real keys have
}

std::vector<float> source_head(int sequence, int position, int head, bool key) {
  std::vector<float> out;
  for (int d = 0; d < kHeadDim; ++d)
    out.push_back(source_value(sequence, position, head, d, key));
  return out;
}

bool is_integer(KvCoding coding) {
  return coding == KvCoding::Int8 || coding == KvCoding::Int4;
}

// Values of the stored domain (integer codings: rotated groups) as a mirror
// holds them, FP16, taken back to the model's domain (the rotation is its
// own inverse): what attention sees.
std::vector<float> from_stored_domain(std::vector<float> values, KvCoding coding) {
  for (float& v : values)
    v = half_to_float(float_to_half(v));
  if (is_integer(coding)) {
    for (int g = 0; g < kHeadDim; g += 32)
      hadamard32(values.data() + g);
  }
  return values;
}

// A vector the model wrote, as attention sees it through a mirror.
std::vector<float> mirrored_value(std::vector<float> values, KvCoding coding) {
  if (is_integer(coding)) {
    for (int g = 0; g < kHeadDim; g += 32)
      hadamard32(values.data() + g);
  }
  return from_stored_domain(std::move(values), coding);
}

struct Layer {
  quire::test::KvStorage storage;
  std::vector<std::uint16_t> key_mirror, value_mirror;

  Layer(KvCoding key, KvCoding value, bool mirrors)
      : storage(make_kv_layout(key, value, kPageSize, kKvHeads, kHeadDim, kPages)) {
    if (!mirrors) return;
    const std::size_t size = std::size_t(kSlots) * kPageSize * kKvHeads * kHeadDim;
    key_mirror.assign(size, 0x7e00);  // FP16 NaN: a slot read before it is written shows
    value_mirror.assign(size, 0x7e00);
    storage.view.mirrors = KvMirrors{key_mirror.data(), value_mirror.data(), kSlots};
  }
};

struct Token {
  int sequence;
  int position;
};

void write(CpuBackend& backend, Layer& layer, const std::vector<Token>& tokens,
           const std::int32_t* mirrored) {
  std::vector<std::int32_t> sequence, position;
  std::vector<float> keys, values;
  for (const Token& token : tokens) {
    sequence.push_back(token.sequence);
    position.push_back(token.position);
    for (int h = 0; h < kKvHeads; ++h) {
      for (const float v : source_head(token.sequence, token.position, h, true))
        keys.push_back(v);
      for (const float v : source_head(token.sequence, token.position, h, false))
        values.push_back(v);
    }
  }
  TokenBatch batch{sequence.data(), position.data(), kTables.data(), std::int64_t(tokens.size()),
                   kMaxPages};
  batch.mirrored = mirrored;
  backend.write_kv(0, layer.storage.view, batch, keys.data(), values.data());
}

// A prefill chunk, a mixed batch, single tokens.
const std::vector<std::vector<Token>> kBatches{
    {{0, 0}, {0, 1}, {0, 2}, {0, 3}, {0, 4}, {0, 5}, {0, 6}, {0, 7}},
    {{1, 0}, {1, 1}, {1, 2}, {1, 3}, {1, 4}, {1, 5}, {0, 8}},
    {{0, 9}},
    {{1, 6}, {0, 10}},
};

const std::vector<Token> kQueries{{0, 10}, {1, 6}, {0, 9}, {0, 5}, {1, 3}, {1, 4}};

std::vector<float> query_values() {
  std::vector<float> q;
  std::mt19937 rng(99);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (std::size_t i = 0; i < kQueries.size() * kHeads * kHeadDim; ++i)
    q.push_back(normal(rng));
  return q;
}

std::vector<float> attend(CpuBackend& backend, const Layer& layer, const std::int32_t* mirrored) {
  std::vector<std::int32_t> sequence, position;
  for (const Token& token : kQueries) {
    sequence.push_back(token.sequence);
    position.push_back(token.position);
  }
  TokenBatch batch{sequence.data(), position.data(), kTables.data(), std::int64_t(kQueries.size()),
                   kMaxPages};
  batch.mirrored = mirrored;
  const std::vector<float> q = query_values();
  std::vector<float> out(q.size(), std::nanf(""));
  backend.paged_attention(0, layer.storage.view, batch, q.data(),
                          AttentionParams{kHeads, 1.0f / std::sqrt(float(kHeadDim))}, out.data());
  return out;
}

// Attention in double over the vectors `seen(sequence, position, head, key)`.
template <typename Seen>
void check_attention(const std::vector<float>& out, Seen seen) {
  const std::vector<float> q = query_values();
  const double scale = 1.0 / std::sqrt(double(kHeadDim));
  for (std::size_t t = 0; t < kQueries.size(); ++t) {
    const int s = kQueries[t].sequence, last = kQueries[t].position;
    for (int head = 0; head < kHeads; ++head) {
      const int kv = head / (kHeads / kKvHeads);
      const float* query = q.data() + (t * kHeads + std::size_t(head)) * kHeadDim;
      std::vector<double> weights;
      std::vector<std::vector<float>> values;
      double maximum = -1e300;
      for (int p = 0; p <= last; ++p) {
        const std::vector<float> key = seen(s, p, kv, true);
        double dot = 0;
        for (int d = 0; d < kHeadDim; ++d)
          dot += double(query[d]) * key[std::size_t(d)];
        weights.push_back(dot * scale);
        maximum = std::max(maximum, weights.back());
        values.push_back(seen(s, p, kv, false));
      }
      double total = 0;
      for (double& w : weights)
        total += (w = std::exp(w - maximum));
      for (int d = 0; d < kHeadDim; ++d) {
        double expected = 0;
        for (std::size_t p = 0; p < weights.size(); ++p)
          expected += weights[p] / total * values[p][std::size_t(d)];
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

bool mirrored_position(int sequence, int position) {
  return position / kPageSize == kMirrored[std::size_t(sequence) * 2];
}

}  // namespace

class CpuKvMirrorsTest : public QObject {
  Q_OBJECT

 private slots:
  void mirroredPagesAreReadInFp16_data() {
    QTest::addColumn<KvCoding>("keyCoding");
    QTest::addColumn<KvCoding>("valueCoding");
    QTest::newRow("q8") << KvCoding::Int8 << KvCoding::Int8;
    QTest::newRow("k8v4") << KvCoding::Int8 << KvCoding::Int4;
    QTest::newRow("q4") << KvCoding::Int4 << KvCoding::Int4;
    QTest::newRow("fp8") << KvCoding::Fp8 << KvCoding::Fp8;
    QTest::newRow("kf8v4") << KvCoding::Fp8 << KvCoding::Int4;
    QTest::newRow("k16v4") << KvCoding::Fp16 << KvCoding::Int4;
  }

  void mirroredPagesAreReadInFp16() {
    QFETCH(KvCoding, keyCoding);
    QFETCH(KvCoding, valueCoding);
    CpuBackend backend;
    Layer mirrored(keyCoding, valueCoding, true);
    Layer plain(keyCoding, valueCoding, false);
    for (const std::vector<Token>& tokens : kBatches) {
      write(backend, mirrored, tokens, kMirrored.data());
      write(backend, plain, tokens, nullptr);
    }
    // The coded pages are the same bytes with or without mirrors.
    QVERIFY(mirrored.storage.key_data == plain.storage.key_data);
    QVERIFY(mirrored.storage.key_scales == plain.storage.key_scales);
    QVERIFY(mirrored.storage.value_data == plain.storage.value_data);
    QVERIFY(mirrored.storage.value_scales == plain.storage.value_scales);

    const std::vector<float> with_mirrors = attend(backend, mirrored, kMirrored.data());
    check_attention(with_mirrors, [&](int s, int p, int h, bool key) {
      if (mirrored_position(s, p))
        return mirrored_value(source_head(s, p, h, key), key ? keyCoding : valueCoding);
      const int page = kTables[std::size_t(s * kMaxPages + p / kPageSize)];
      return quire::test::decode_stored(plain.storage, key, page, p % kPageSize, h);
    });

    // Queries before their sequence's mirrored page never read it: the same
    // bits as without mirrors. Those in it come out nearer the exact values.
    const std::vector<float> without = attend(backend, plain, nullptr);
    const std::size_t row = std::size_t(kHeads) * kHeadDim;
    double error_with = 0, error_without = 0;
    const std::vector<float> exact = [&] {
      Layer fp16(KvCoding::Fp16, KvCoding::Fp16, false);
      for (const std::vector<Token>& tokens : kBatches)
        write(backend, fp16, tokens, nullptr);
      return attend(backend, fp16, nullptr);
    }();
    for (std::size_t t = 0; t < kQueries.size(); ++t) {
      const bool reads_mirror = mirrored_position(kQueries[t].sequence, kQueries[t].position);
      for (std::size_t i = t * row; i < (t + 1) * row; ++i) {
        if (!reads_mirror) {
          QCOMPARE(with_mirrors[i], without[i]);
        } else {
          error_with += std::fabs(with_mirrors[i] - exact[i]);
          error_without += std::fabs(without[i] - exact[i]);
        }
      }
    }
    QVERIFY2(error_with < error_without,
             qPrintable(QString("%1 vs %2").arg(error_with).arg(error_without)));
  }

  // A chat's open page written before it had a mirror: fill_mirror decodes
  // its tokens into the slot, and later writes continue there.
  void aFilledMirrorHoldsThePageSoFar_data() { mirroredPagesAreReadInFp16_data(); }

  void aFilledMirrorHoldsThePageSoFar() {
    QFETCH(KvCoding, keyCoding);
    QFETCH(KvCoding, valueCoding);
    CpuBackend backend;
    Layer layer(keyCoding, valueCoding, true);
    Layer plain(keyCoding, valueCoding, false);
    for (std::size_t b = 0; b < kBatches.size(); ++b) {
      if (b + 1 == kBatches.size()) {
        // Before the last batch (positions 10 and 6): the open pages' earlier
        // tokens, 8-9 of sequence 0 and 4-5 of sequence 1, into the mirrors.
        backend.fill_mirror(0, layer.storage.view, 5, 1, 2);
        backend.fill_mirror(0, layer.storage.view, 9, 0, 2);
      }
      const bool last = b + 1 == kBatches.size();
      write(backend, layer, kBatches[b], last ? kMirrored.data() : nullptr);
      write(backend, plain, kBatches[b], nullptr);
    }
    check_attention(attend(backend, layer, kMirrored.data()), [&](int s, int p, int h, bool key) {
      const int page = kTables[std::size_t(s * kMaxPages + p / kPageSize)];
      const KvCoding coding = key ? keyCoding : valueCoding;
      if (!mirrored_position(s, p))
        return quire::test::decode_stored(plain.storage, key, page, p % kPageSize, h);
      if ((s == 0 && p == 10) || (s == 1 && p == 6))  // written with the mirror
        return mirrored_value(source_head(s, p, h, key), coding);
      // Filled: the page's values as stored, rounded to FP16 there.
      return from_stored_domain(
          quire::test::decode_stored_domain(plain.storage, key, page, p % kPageSize, h), coding);
    });
  }

  void badMirrorsAreRefused() {
    CpuBackend backend;
    Layer without(KvCoding::Int4, KvCoding::Int4, false);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             backend.fill_mirror(0, without.storage.view, 0, 0, 1));
    Layer layer(KvCoding::Int4, KvCoding::Int4, true);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             backend.fill_mirror(0, layer.storage.view, 0, kSlots, 1));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             backend.fill_mirror(0, layer.storage.view, kPages, 0, 1));
    // A batch naming a slot the layer does not have.
    const std::vector<std::int32_t> beyond{2, kSlots, -1, 0};
    QVERIFY_THROWS_EXCEPTION(std::out_of_range, write(backend, layer, {{0, 8}}, beyond.data()));
    QVERIFY_THROWS_EXCEPTION(std::out_of_range, attend(backend, layer, beyond.data()));
  }
};

QUIRE_TEST(CpuKvMirrorsTest)
#include "test_cpu_kv_mirrors.moc"
