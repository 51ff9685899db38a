#include "decode_loop.h"

#include <algorithm>
#include <set>
#include <span>

#include "quire/engine/runtime/step_graphs.h"
#include "runtime_test_support.h"

namespace quire::test {

DecodeLoop::DecodeLoop(engine::ModelRuntime& runtime, int sequences, int prompt_tokens, int vocab)
    : runtime_(runtime), tokens_(static_cast<std::size_t>(sequences)) {
  for (int s = 0; s < sequences; ++s) {
    tokens_[std::size_t(s)] = random_tokens(prompt_tokens, vocab, 40 + std::uint32_t(s));
  }
}

std::vector<std::vector<float>> DecodeLoop::run(int steps) {
  const int page_size = runtime_.options().page_size;
  std::vector<std::vector<float>> logits;
  std::vector<std::vector<cache::PageIndex>> pages(tokens_.size());
  for (int step = -1; step < steps; ++step) {
    std::vector<engine::ForwardPass::Sequence> batch;
    for (std::size_t s = 0; s < tokens_.size(); ++s) {
      const std::vector<cache::TokenId>& tokens = tokens_[s];
      const auto length = static_cast<int>(tokens.size());
      std::vector<cache::PageIndex>& table = pages[s];
      while (static_cast<int>(table.size()) * page_size < length)
        table.push_back(static_cast<cache::PageIndex>(s * kPagesPerSequence + table.size()));
      const int first = step < 0 ? 0 : length - 1;
      batch.push_back({table, std::span(tokens).subspan(std::size_t(first)), first, step < 0});
    }
    const engine::ForwardPass::Result result = runtime_.forward().run(batch);
    if (step < 0) continue;
    for (std::size_t s = 0; s < tokens_.size(); ++s) {
      const std::span<const float> row = result.row(s);
      logits.emplace_back(row.begin(), row.end());
      const auto best = std::max_element(row.begin(), row.end()) - row.begin();
      tokens_[s].push_back(static_cast<cache::TokenId>(best));
    }
  }
  return logits;
}

int widths_visited(int prompt_tokens, int steps, int page_size) {
  std::set<int> widths;
  for (int length = prompt_tokens; length < prompt_tokens + steps; ++length)
    widths.insert(engine::page_bucket((length + page_size - 1) / page_size));
  return static_cast<int>(widths.size());
}

}  // namespace quire::test
