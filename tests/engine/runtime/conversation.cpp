#include "conversation.h"

#include <QTest>
#include <algorithm>
#include <optional>
#include <span>
#include <stdexcept>

#include "runtime_test_support.h"

namespace quire::test {
namespace {

std::int32_t argmax(const std::vector<float>& row) {
  return static_cast<std::int32_t>(std::max_element(row.begin(), row.end()) - row.begin());
}

}  // namespace

engine::ForwardPass::Result run_once(engine::ModelRuntime& runtime,
                                     const engine::ForwardPass::Sequence& step) {
  return runtime.forward().run(std::span(&step, 1));
}

std::vector<cache::TokenId> converse_turn(engine::ModelRuntime& runtime,
                                          std::vector<cache::TokenId> tokens, int steps,
                                          std::vector<std::vector<float>>& logits,
                                          const PassRunner& run) {
  const auto pass = [&](cache::SequenceId sequence, const engine::ForwardPass::Sequence& step) {
    return run ? run(sequence, step) : run_once(runtime, step);
  };
  cache::PageCache& cache = runtime.cache();
  engine::KvStorage& storage = runtime.storage();
  const int page_size = runtime.options().page_size;
  cache::AdmissionRequest request{tokens, steps};
  std::optional<cache::Admission> admission = cache.admit(std::move(request));
  if (!admission) throw std::runtime_error("not admitted");
  const cache::SequenceId sequence = admission->sequence;
  storage.execute(admission->instructions);
  std::vector<float> last;
  for (const cache::TokenRange& range : admission->compute) {
    for (const cache::TokenRange& chunk :
         engine::page_aligned_chunks(range, runtime.options().max_chunk_tokens, page_size)) {
      storage.save_to_host(cache.ensure_pages(sequence, chunk.end).saves);
      engine::ForwardPass::Sequence step{
          cache.page_table(sequence),
          std::span(tokens).subspan(static_cast<std::size_t>(chunk.begin),
                                    static_cast<std::size_t>(chunk.end - chunk.begin)),
          chunk.begin, false};
      step.window_pages = cache.window_page_table(sequence);
      const engine::ForwardPass::Result result = pass(sequence, step);
      cache.mark_computed(sequence, chunk.end);
      last.assign(result.row(0).begin(), result.row(0).end());
      logits.push_back(last);
    }
  }
  for (int i = 0; i < steps; ++i) {
    const cache::TokenId next = argmax(last);
    const cache::AppendResult appended = cache.append(sequence, std::span(&next, 1));
    if (appended.status != cache::AppendStatus::Appended) throw std::runtime_error("no page");
    storage.save_to_host(appended.saves);
    tokens.push_back(next);
    const auto position = static_cast<std::int32_t>(tokens.size() - 1);
    engine::ForwardPass::Sequence step{
        cache.page_table(sequence), std::span(tokens).subspan(tokens.size() - 1), position, false};
    step.window_pages = cache.window_page_table(sequence);
    const engine::ForwardPass::Result result = pass(sequence, step);
    cache.mark_computed(sequence, position + 1);
    last.assign(result.row(0).begin(), result.row(0).end());
    logits.push_back(last);
  }
  cache.release(sequence);
  return tokens;
}

Conversation converse(engine::ModelRuntime& runtime) {
  Conversation c;
  std::vector<cache::TokenId> first = random_tokens(100, 512, 11);
  first = converse_turn(runtime, first, 6, c.logits);
  converse_turn(runtime, random_tokens(200, 512, 12), 3, c.logits);
  for (cache::TokenId t : random_tokens(20, 512, 13))
    first.push_back(t);
  first = converse_turn(runtime, first, 4, c.logits);
  if (const std::optional<cache::DefragPlan> plan = runtime.cache().defragment()) {
    runtime.storage().apply_moves(*plan);
    c.defragmented = true;
  }
  for (cache::TokenId t : random_tokens(9, 512, 14))
    first.push_back(t);
  converse_turn(runtime, first, 3, c.logits);
  c.stats = runtime.cache().stats();
  return c;
}

void compare_logits(const Conversation& actual, const Conversation& expected) {
  QCOMPARE(actual.logits.size(), expected.logits.size());
  for (std::size_t i = 0; i < actual.logits.size(); ++i) {
    QVERIFY2(actual.logits[i] == expected.logits[i],
             qPrintable(QString("logits row %1 differ").arg(i)));
  }
}

}  // namespace quire::test
