// The residual window (RuntimeOptions::residual_window): each running
// sequence's open page read from an FP16 mirror while its coded page is
// written as ever. Teacher-forced decoding (the same tokens in every run)
// over pages of 32 compares each step's logits with the FP16 cache's; the
// slots' bookkeeping is checked by runs whose sequences must give the same
// bits as a run with every sequence mirrored, or with none.

#include <QTest>
#include <algorithm>
#include <span>

#include "quire/cache/cache_format.h"
#include "quire/kernels/cpu/cpu_backend.h"
#include "runtime_test_support.h"
#include "test_main.h"

using namespace quire;
using quire::test::TestModel;

Q_DECLARE_METATYPE(cache::CacheFormat)

namespace {

constexpr int kPageSize = 32;
constexpr int kPagesPerSequence = 8;

engine::RuntimeOptions window_options(cache::CacheFormat format, int mirror_slots) {
  engine::RuntimeOptions options = test::small_cache_options(format);
  options.cache_tokens = 1024;
  options.page_size = kPageSize;
  options.residual_window = mirror_slots;
  options.max_chunk_tokens = 128;  // each prompt in one step
  return options;
}

// Sequences of a teacher-forced run: their tokens, and which of them are in
// each step (a sequence leaves the batch for `pause` steps to let others
// take its mirror).
struct Plan {
  std::vector<std::vector<cache::TokenId>> tokens;
  int prompt = 0;
  int steps = 0;
  // Per sequence, the decode steps it sits out.
  std::vector<std::pair<int, int>> pauses;  // [first, last] step
};

// Per sequence, the logits of every decode step it took part in.
std::vector<std::vector<std::vector<float>>> run(engine::ModelRuntime& runtime, const Plan& plan) {
  const std::size_t sequences = plan.tokens.size();
  std::vector<std::vector<std::vector<float>>> logits(sequences);
  std::vector<std::vector<cache::PageIndex>> tables(sequences);
  for (std::size_t s = 0; s < sequences; ++s) {
    for (int p = 0; p < kPagesPerSequence; ++p)
      tables[s].push_back(static_cast<cache::PageIndex>(s * kPagesPerSequence + std::size_t(p)));
  }
  std::vector<int> length(sequences, 0);
  for (int step = -1; step < plan.steps; ++step) {
    std::vector<engine::ForwardPass::Sequence> batch;
    std::vector<std::size_t> members;
    for (std::size_t s = 0; s < sequences; ++s) {
      if (s < plan.pauses.size() && step >= plan.pauses[s].first && step <= plan.pauses[s].second)
        continue;
      const int first = length[s];
      const int count = step < 0 ? plan.prompt : 1;
      batch.push_back({tables[s],
                       std::span(plan.tokens[s]).subspan(std::size_t(first), std::size_t(count)),
                       first, false});
      members.push_back(s);
      length[s] += count;
    }
    if (batch.empty()) continue;
    const engine::ForwardPass::Result result = runtime.forward().run(batch);
    for (std::size_t i = 0; i < members.size(); ++i) {
      const std::span<const float> row = result.row(i);
      logits[members[i]].emplace_back(row.begin(), row.end());
    }
  }
  return logits;
}

std::vector<std::vector<std::vector<float>>> run(const TestModel& model,
                                                 const engine::RuntimeOptions& options,
                                                 const Plan& plan) {
  kernels::CpuBackend backend;
  engine::ModelRuntime runtime(model.description(), backend, options);
  return run(runtime, plan);
}

// Mean over the steps of the largest logit difference, relative to the
// largest reference logit.
double mean_error(const std::vector<std::vector<float>>& logits,
                  const std::vector<std::vector<float>>& reference) {
  double total = 0;
  for (std::size_t i = 0; i < logits.size(); ++i)
    total += test::max_abs_difference(logits[i], reference[i]) / test::max_abs(reference[i]);
  return total / double(logits.size());
}

}  // namespace

class ResidualWindowTest : public QObject {
  Q_OBJECT

  std::unique_ptr<TestModel> model_;
  Plan plan_;

 private slots:
  void initTestCase() {
    model_ = std::make_unique<TestModel>(test::small_llama_spec());
    // 70 prompt tokens (two full pages and 6 of the third), then 60 decode
    // steps across two more page boundaries.
    plan_.prompt = 70;
    plan_.steps = 60;
    plan_.tokens = {test::random_tokens(130, 512, 21)};
  }

  void windowBringsDecodeCloserToFp16_data() {
    QTest::addColumn<cache::CacheFormat>("format");
    for (const char* name : {"q4", "q6", "kf8v4", "fp8", "q8"})
      QTest::newRow(name) << *cache::parse_cache_format(name);
  }

  void windowBringsDecodeCloserToFp16() {
    QFETCH(cache::CacheFormat, format);
    const auto reference = run(*model_, window_options(cache::CacheFormat::FP16, 4), plan_)[0];
    const auto without = run(*model_, window_options(format, 0), plan_)[0];
    const auto with = run(*model_, window_options(format, 4), plan_)[0];
    const double error_without = mean_error(without, reference);
    const double error_with = mean_error(with, reference);
    qInfo("%s: mean largest logit error %.6f without the window, %.6f with it",
          cache::format_info(format).name.data(), error_without, error_with);
    QVERIFY2(error_with < error_without,
             qPrintable(QString("%1 vs %2").arg(error_with).arg(error_without)));

    // A chat within its first page reads every token from the mirror: near
    // the FP16 cache's logits (FP16 rounding in the coding's domain is all
    // that differs).
    Plan short_chat;
    short_chat.prompt = 10;
    short_chat.steps = 20;
    short_chat.tokens = {test::random_tokens(30, 512, 22)};
    const auto short_reference =
        run(*model_, window_options(cache::CacheFormat::FP16, 4), short_chat)[0];
    const double short_without =
        mean_error(run(*model_, window_options(format, 0), short_chat)[0], short_reference);
    const double short_with =
        mean_error(run(*model_, window_options(format, 4), short_chat)[0], short_reference);
    qInfo("%s, within one page: %.6f without the window, %.6f with it",
          cache::format_info(format).name.data(), short_without, short_with);
    QVERIFY(short_with < 0.1 * short_without);
  }

  // Three sequences, one slot: the first sequence of each step that needs a
  // slot takes it, so sequence 0 keeps it throughout, and sequences 1 and 2
  // read their coded pages. Each gives the bits of a run where it alone
  // had its kind.
  void moreSequencesThanSlotsReadTheirCodedPages() {
    Plan plan;
    plan.prompt = 40;
    plan.steps = 30;
    for (std::uint32_t s = 0; s < 3; ++s)
      plan.tokens.push_back(test::random_tokens(70, 512, 30 + s));
    const cache::CacheFormat q4 = cache::CacheFormat::Q4;
    const auto one = run(*model_, window_options(q4, 1), plan);
    const auto all = run(*model_, window_options(q4, 3), plan);
    const auto none = run(*model_, window_options(q4, 0), plan);
    QVERIFY(one[0] == all[0]);
    QVERIFY(one[1] == none[1]);
    QVERIFY(one[2] == none[2]);
    QVERIFY(all[1] != none[1]);
  }

  // One slot, two sequences taking turns: sequence 1 runs alone while
  // sequence 0 sits out (its open page's slot goes to sequence 1, filled
  // with that page's tokens so far), then sequence 0 comes back alone and
  // takes the slot again, refilled with its own 13 tokens (decoded). Its
  // newer tokens are exact: its steps come out nearer the FP16 cache than
  // without the window, on the refilled page and on the next.
  void aReturningSequenceRefillsItsMirror() {
    Plan plan;
    plan.prompt = 40;
    plan.steps = 50;
    plan.tokens = {test::random_tokens(100, 512, 50), test::random_tokens(100, 512, 51)};
    plan.pauses = {{5, 20}, {21, 49}};
    const cache::CacheFormat q4 = cache::CacheFormat::Q4;
    const auto reference = run(*model_, window_options(cache::CacheFormat::FP16, 1), plan);
    const auto without = run(*model_, window_options(q4, 0), plan);
    const auto kept = run(*model_, window_options(q4, 2), plan);
    kernels::CpuBackend backend;
    engine::ModelRuntime runtime(model_->description(), backend, window_options(q4, 1));
    const auto with = run(runtime, plan);
    // Rows: the prompt's, 5 steps, then 29 after the pause. Sequence 0 comes
    // back at position 45: its page holds 32..63, so rows 6..24 read a
    // refilled mirror, and rows 25.. (position 64 on) a fresh one.
    QCOMPARE(with[0].size(), std::size_t{35});
    const auto steps = [](const std::vector<std::vector<float>>& rows, int first, int last) {
      return std::vector<std::vector<float>>(rows.begin() + first, rows.begin() + last);
    };
    const double error_with = mean_error(steps(with[0], 6, 25), steps(reference[0], 6, 25));
    const double error_without = mean_error(steps(without[0], 6, 25), steps(reference[0], 6, 25));
    const double error_kept = mean_error(steps(kept[0], 6, 25), steps(reference[0], 6, 25));
    qInfo(
        "returning sequence: %.6f with a refilled mirror, %.6f without the window, %.6f with "
        "its mirror kept",
        error_with, error_without, error_kept);
    QVERIFY(error_with < error_without);
    // The refilled tokens are the coded ones: not the bits of the kept run.
    QVERIFY(steps(with[0], 6, 25) != steps(kept[0], 6, 25));
    QVERIFY(mean_error(steps(with[0], 25, 35), steps(reference[0], 25, 35)) <
            mean_error(steps(without[0], 25, 35), steps(reference[0], 25, 35)));
    // Sequence 1 took the slot at its 6th step (row 6, filled with 13
    // tokens) and kept it to its last (row 21).
    QVERIFY(mean_error(steps(with[1], 6, 22), steps(reference[1], 6, 22)) <
            mean_error(steps(without[1], 6, 22), steps(reference[1], 6, 22)));
    QCOMPARE(runtime.storage().mirrors().in_use(), 1);
  }

  void theWindowIsPricedAndAllocatedExactly() {
    const cache::CacheFormat q4 = cache::CacheFormat::Q4;
    kernels::CpuBackend backend;
    engine::ModelRuntime with(model_->description(), backend, window_options(q4, 4));
    engine::ModelRuntime without(model_->description(), backend, window_options(q4, 0));
    engine::ModelRuntime fp16(model_->description(), backend,
                              window_options(cache::CacheFormat::FP16, 4));
    // 3 layers x K and V x 4 slots x 32 tokens x 2 heads x 64 dims x 2 bytes.
    const std::int64_t expected = 3 * 2 * 4 * 32 * 2 * 64 * 2;
    QCOMPARE(with.storage().mirror_bytes(), expected);
    QCOMPARE(without.storage().mirror_bytes(), std::int64_t{0});
    QCOMPARE(fp16.storage().mirror_bytes(), std::int64_t{0});
    QCOMPARE(fp16.storage().mirror_slots(), 0);
    QCOMPARE(with.plan().devices.at(0).cache - without.plan().devices.at(0).cache, expected);
    QCOMPARE(with.plan().pages, without.plan().pages);

    // A window wider than the sequences a step can hold gets a slot per
    // sequence, no more, in memory and in the plan.
    engine::RuntimeOptions wide_options = window_options(q4, 40);
    wide_options.max_sequences = 5;
    engine::RuntimeOptions five_options = window_options(q4, 5);
    five_options.max_sequences = 5;
    QCOMPARE(engine::residual_window_slots(wide_options), 5);
    engine::ModelRuntime wide(model_->description(), backend, wide_options);
    engine::ModelRuntime five(model_->description(), backend, five_options);
    QCOMPARE(wide.storage().mirror_slots(), 5);
    QCOMPARE(wide.storage().mirror_bytes(), 5 * expected / 4);
    QCOMPARE(wide.plan().devices.at(0).cache, five.plan().devices.at(0).cache);
  }
};

QUIRE_TEST(ResidualWindowTest)
#include "test_residual_window.moc"
