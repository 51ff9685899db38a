// ForwardPass::Sequence's given embedding rows and both-ways ranges: rows
// given as the table's own (scaled) rows change no bit of the logits, ids
// outside the vocabulary need given rows, a both-ways range of one position
// is causal attention, positions before a range are untouched by it while
// the range itself and what follows change, and a range must end within
// its step.

#include <QTest>
#include <span>
#include <vector>

#include "quire/kernels/cpu/cpu_backend.h"
#include "runtime_test_support.h"
#include "test_main.h"

using namespace quire;
using quire::test::TestModel;

namespace {

constexpr cache::TokenId kImageId = cache::TokenId{1} << 30;

const std::vector<cache::PageIndex>& table() {
  static const std::vector<cache::PageIndex> pages{0, 1, 2, 3, 4, 5, 6, 7};
  return pages;
}

engine::RuntimeOptions options() {
  engine::RuntimeOptions options = test::small_cache_options();
  options.max_chunk_tokens = 128;
  return options;
}

engine::modelgen::RandomModelSpec gemma3_spec() {
  engine::modelgen::RandomModelSpec spec = engine::modelgen::default_spec("gemma3");
  spec.layers = 4;  // all sliding (Gemma 3 has five to one full)
  spec.hidden = 128;
  spec.heads = 4;
  spec.kv_heads = 2;
  spec.intermediate = 256;
  spec.sliding_window = 8;
  spec.seed = 41;
  return spec;
}

// Every row of logits of one step over `tokens` in a fresh runtime.
std::vector<std::vector<float>> all_rows(const TestModel& model,
                                         std::span<const cache::TokenId> tokens,
                                         std::span<const engine::ForwardPass::EmbeddedRows> given,
                                         std::span<const cache::TokenRange> both_ways) {
  kernels::CpuBackend backend;
  engine::ModelRuntime runtime(model.description(), backend, options());
  engine::ForwardPass::Sequence sequence{table(), tokens, 0, true};
  sequence.embedded = given;
  sequence.both_ways = both_ways;
  const engine::ForwardPass::Result result = runtime.forward().run(std::span(&sequence, 1));
  std::vector<std::vector<float>> rows;
  for (int row = 0; row < result.rows[0]; ++row) {
    const std::span<const float> values = result.row(0, row);
    rows.emplace_back(values.begin(), values.end());
  }
  return rows;
}

// The embedding table's rows of `ids`, times the model's embedding scale:
// what the forward pass puts in their place.
std::vector<float> scaled_rows(const TestModel& model, std::span<const cache::TokenId> ids) {
  kernels::CpuBackend backend;
  engine::ModelRuntime runtime(model.description(), backend, options());
  const engine::ModelConfig& c = runtime.model().config;
  std::vector<float> rows(ids.size() * std::size_t(c.hidden_size));
  backend.embedding(0, runtime.loaded().embedding, c.vocab_size, c.hidden_size, ids.data(),
                    std::int64_t(ids.size()), rows.data());
  for (float& value : rows)
    value *= runtime.model().embedding_scale;
  return rows;
}

}  // namespace

class GivenInputsTest : public QObject {
  Q_OBJECT

 private slots:
  void givenTableRowsChangeNoBit_data() {
    QTest::addColumn<QString>("architecture");
    QTest::newRow("llama") << "llama";
    QTest::newRow("gemma3 (embedding scale)") << "gemma3";
  }

  void givenTableRowsChangeNoBit() {
    QFETCH(QString, architecture);
    const TestModel model(architecture == "llama" ? test::small_llama_spec() : gemma3_spec());
    const std::vector<cache::TokenId> text = test::random_tokens(40, 512, 3);
    std::vector<cache::TokenId> with_image = text;
    for (int i = 10; i < 22; ++i)
      with_image[std::size_t(i)] = kImageId + i;
    const std::vector<float> rows = scaled_rows(model, std::span(text).subspan(10, 12));
    const engine::ForwardPass::EmbeddedRows given{10, 12, rows.data()};
    QCOMPARE(all_rows(model, with_image, std::span(&given, 1), {}), all_rows(model, text, {}, {}));
  }

  void idsOutsideTheVocabularyNeedGivenRows() {
    const TestModel model(test::small_llama_spec());
    std::vector<cache::TokenId> tokens = test::random_tokens(16, 512, 4);
    tokens[5] = kImageId;
    try {
      all_rows(model, tokens, {}, {});
      QFAIL("a token outside the vocabulary was embedded");
    } catch (const std::invalid_argument& error) {
      QCOMPARE(QString(error.what()),
               QString("token id 1073741824 at position 5 lies outside the vocabulary of 512 and "
                       "no embedding is given for it"));
    }
    const std::vector<float> row(128 * 2, 0.25f);
    const engine::ForwardPass::EmbeddedRows past_the_end{15, 2, row.data()};
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             all_rows(model, tokens, std::span(&past_the_end, 1), {}));
  }

  void bothWaysRangesAttendAhead() {
    const TestModel model(gemma3_spec());
    const std::vector<cache::TokenId> tokens = test::random_tokens(40, 512, 5);
    const auto causal = all_rows(model, tokens, {}, {});

    // One position: the same as causal attention, bit for bit.
    const cache::TokenRange single{12, 13};
    QCOMPARE(all_rows(model, tokens, {}, std::span(&single, 1)), causal);

    // Twelve positions, longer than the sliding window of 8: rows before the
    // range keep every bit; every row of the range changes, and each layer
    // carries the change 7 rows further, past the prompt's end in four.
    const cache::TokenRange block{10, 22};
    const auto both = all_rows(model, tokens, {}, std::span(&block, 1));
    for (int row = 0; row < 10; ++row)
      QCOMPARE(both[std::size_t(row)], causal[std::size_t(row)]);
    for (int row = 10; row < 40; ++row) {
      QVERIFY2(test::max_abs_difference(both[std::size_t(row)], causal[std::size_t(row)]) > 1e-4f,
               qPrintable(QString("row %1 did not change").arg(row)));
    }
  }

  void aRangeMustEndWithinItsStep() {
    const TestModel model(gemma3_spec());
    const std::vector<cache::TokenId> tokens = test::random_tokens(20, 512, 6);
    const cache::TokenRange past{15, 25};
    try {
      all_rows(model, tokens, {}, std::span(&past, 1));
      QFAIL("a range past the step was taken");
    } catch (const std::invalid_argument& error) {
      QCOMPARE(QString(error.what()),
               QString("the both-ways range positions 15..25 ends past the step, which computes "
                       "positions up to 20: its keys would not be written yet"));
    }
    const cache::TokenRange overlapping[] = {{2, 6}, {5, 8}};
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, all_rows(model, tokens, {}, overlapping));
  }
};

QUIRE_TEST(GivenInputsTest)
#include "test_given_inputs.moc"
