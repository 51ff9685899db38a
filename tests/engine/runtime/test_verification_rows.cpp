// A speculative step's verification chunk (ForwardPass::Sequence::decode_rows,
// all_logits, rewindable) in every cache coding: each row of logits has the
// bits of the decode step of its own token, and after rewind(kept) the
// sequence's pages hold the bytes that decode steps of the kept tokens
// alone leave there (an FP8 page's scale grown by a token given back
// shrinks again), so that the next token's logits are those of a run that
// never saw the others.

#include <QTest>
#include <cstring>
#include <span>
#include <vector>

#include "quire/cache/cache_format.h"
#include "quire/kernels/cpu/cpu_backend.h"
#include "runtime_test_support.h"
#include "test_main.h"

using namespace quire;
using quire::test::TestModel;

Q_DECLARE_METATYPE(cache::CacheFormat)

namespace {

constexpr int kPageSize = 32;
constexpr int kChunk = 6;  // the token and five drafts
constexpr int kKept = 2;   // the token and the first draft

using Tokens = std::vector<cache::TokenId>;
using Rows = std::vector<std::vector<float>>;

engine::RuntimeOptions verification_options(cache::CacheFormat format, int mirror_slots) {
  engine::RuntimeOptions options = test::small_cache_options(format);
  options.page_size = kPageSize;
  options.residual_window = mirror_slots;
  options.max_chunk_tokens = 128;
  return options;
}

const std::vector<cache::PageIndex>& table() {
  static const std::vector<cache::PageIndex> pages{0, 1, 2, 3, 4, 5, 6, 7};
  return pages;
}

// The prompt in one step.
void prefill(engine::ModelRuntime& runtime, std::span<const cache::TokenId> prompt) {
  const engine::ForwardPass::Sequence sequence{table(), prompt, 0, false};
  runtime.forward().run(std::span(&sequence, 1));
}

// One decode step of `token` at `position`: its row of logits.
std::vector<float> decode(engine::ModelRuntime& runtime, const cache::TokenId& token,
                          std::int32_t position) {
  const engine::ForwardPass::Sequence sequence{table(), std::span(&token, 1), position, false};
  const engine::ForwardPass::Result result = runtime.forward().run(std::span(&sequence, 1));
  const std::span<const float> row = result.row(0);
  return {row.begin(), row.end()};
}

// The bytes of positions [0, end) of page `page` in every layer: data, and
// scales (an FP8 page's per-head scales whole).
std::vector<std::uint8_t> page_bytes(const engine::ModelRuntime& runtime, int page, int end) {
  std::vector<std::uint8_t> bytes;
  const engine::KvStorage& storage = const_cast<engine::ModelRuntime&>(runtime).storage();
  for (std::size_t layer = 0; layer < storage.layers(); ++layer) {
    const kernels::KvLayerView& view = storage.view(layer);
    const kernels::KvLayerLayout& l = view.layout;
    const auto add = [&](const void* plane, std::int64_t page_bytes, bool whole) {
      if (page_bytes == 0) return;
      const auto* first = static_cast<const std::uint8_t*>(plane) + page * page_bytes;
      bytes.insert(bytes.end(), first, first + (whole ? page_bytes : page_bytes / kPageSize * end));
    };
    add(view.planes.key_data, l.key_data_page_bytes, false);
    add(view.planes.key_scales, l.key_scale_page_bytes, l.key_coding == kernels::KvCoding::Fp8);
    add(view.planes.value_data, l.value_data_page_bytes, false);
    add(view.planes.value_scales, l.value_scale_page_bytes,
        l.value_coding == kernels::KvCoding::Fp8);
  }
  return bytes;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

class VerificationRowsTest : public QObject {
  Q_OBJECT

 private slots:
  void chunkRowsAndRewoundPagesAreThoseOfDecodeSteps_data() {
    QTest::addColumn<cache::CacheFormat>("format");
    QTest::addColumn<int>("mirrors");
    const struct {
      const char* name;
      cache::CacheFormat format;
    } formats[] = {{"fp16", cache::CacheFormat::FP16},
                   {"q8", cache::CacheFormat::Q8},
                   {"q6", cache::CacheFormat::Q6},
                   {"q4", cache::CacheFormat::Q4},
                   {"fp8", cache::CacheFormat::FP8},
                   {"k fp8, v q4", {cache::ElementCoding::FP8, cache::ElementCoding::Q4}}};
    for (const auto& [name, format] : formats) {
      QTest::addRow("%s", name) << format << 4;
      if (format != cache::CacheFormat::FP16)
        QTest::addRow("%s, no residual window", name) << format << 0;
    }
  }

  void chunkRowsAndRewoundPagesAreThoseOfDecodeSteps() {
    QFETCH(cache::CacheFormat, format);
    QFETCH(int, mirrors);
    const TestModel model(test::small_llama_spec());
    const engine::RuntimeOptions options = verification_options(format, mirrors);
    const int vocab = static_cast<int>(model.description()->config.vocab_size);
    kernels::CpuBackend backend;
    bool recoded = false;
    // Chunks early in a page, where a later token most often grows an FP8
    // page's scale, and one in the middle of a page.
    for (const int prompt_length : {33, 34, 35, 36, 50}) {
      const Tokens prompt = test::random_tokens(prompt_length, vocab, 100 + prompt_length);
      const Tokens chunk = test::random_tokens(kChunk, vocab, 200 + prompt_length);
      const auto at = static_cast<std::int32_t>(prompt_length);
      const int page = prompt_length / kPageSize;
      const int kept_end = prompt_length % kPageSize + kKept;
      const cache::TokenId next = chunk.back() + 1;  // the model's token after the kept ones

      // Decode steps of the chunk's tokens, one at a time; the kept ones,
      // then another token.
      Rows decoded;
      {
        engine::ModelRuntime runtime(model.description(), backend, options);
        prefill(runtime, prompt);
        for (int t = 0; t < kChunk; ++t)
          decoded.push_back(decode(runtime, chunk[std::size_t(t)], at + t));
      }
      std::vector<std::uint8_t> kept_bytes;
      std::vector<float> after_kept;
      {
        engine::ModelRuntime runtime(model.description(), backend, options);
        prefill(runtime, prompt);
        for (int t = 0; t < kKept; ++t)
          decode(runtime, chunk[std::size_t(t)], at + t);
        kept_bytes = page_bytes(runtime, page, kept_end);
        after_kept = decode(runtime, next, at + kKept);
      }

      // The chunk: every row as decoded; given back past the kept tokens,
      // the page as the kept steps left it, and the next token as after them.
      for (const bool rewind : {true, false}) {
        engine::ModelRuntime runtime(model.description(), backend, options);
        prefill(runtime, prompt);
        engine::ForwardPass::Sequence sequence{table(), chunk, at, true};
        sequence.decode_rows = true;
        sequence.rewindable = true;
        const engine::ForwardPass::Result result = runtime.forward().run(std::span(&sequence, 1));
        QCOMPARE(result.rows.front(), kChunk);
        for (int r = 0; r < kChunk; ++r) {
          const std::span<const float> row = result.row(0, r);
          QVERIFY2(same_bits({row.begin(), row.end()}, decoded[std::size_t(r)]),
                   qPrintable(QString("row %1 of the chunk after %2 tokens").arg(r).arg(at)));
        }
        if (!rewind) {
          recoded = recoded || page_bytes(runtime, page, kept_end) != kept_bytes;
          continue;
        }
        runtime.forward().rewind(0, kKept);
        QVERIFY(page_bytes(runtime, page, kept_end) == kept_bytes);
        QVERIFY(same_bits(decode(runtime, next, at + kKept), after_kept));
      }
    }
    // The rewind had something to undo: some chunk's later tokens recoded
    // the kept ones' page (FP8 halves: a grown scale); no other coding does.
    QCOMPARE(recoded, format.key == cache::ElementCoding::FP8);
  }

  void rewindingKeepsBetweenOneTokenAndTheChunk() {
    const TestModel model(test::small_llama_spec());
    kernels::CpuBackend backend;
    engine::ModelRuntime runtime(model.description(), backend,
                                 verification_options(cache::CacheFormat::FP8, 4));
    const int vocab = static_cast<int>(model.description()->config.vocab_size);
    const Tokens prompt = test::random_tokens(40, vocab, 7);
    prefill(runtime, prompt);
    const Tokens chunk = test::random_tokens(kChunk, vocab, 8);
    engine::ForwardPass::Sequence sequence{table(), chunk, 40, true};
    sequence.decode_rows = true;
    QVERIFY(runtime.forward().can_rewind());
    runtime.forward().run(std::span(&sequence, 1));
    // Not run as rewindable: nothing was kept to rewind with.
    QVERIFY_THROWS_EXCEPTION(std::logic_error, runtime.forward().rewind(0, 1));
    sequence.first_position = 40 + kChunk;
    sequence.rewindable = true;
    runtime.forward().run(std::span(&sequence, 1));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, runtime.forward().rewind(0, 0));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, runtime.forward().rewind(0, kChunk + 1));
    runtime.forward().rewind(0, kChunk);  // keeps everything: nothing to do
  }
};

QUIRE_TEST(VerificationRowsTest)
#include "test_verification_rows.moc"
