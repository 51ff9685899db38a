#pragma once

#include <vector>

#include "quire/engine/runtime/model_runtime.h"

namespace quire::test {

// Greedy decoding straight through ForwardPass, bypassing the cache's
// bookkeeping: sequence s owns pages s * kPagesPerSequence onwards of the
// runtime's storage. run() sends the prompts in one step (every row of
// logits: never recorded), then `steps` decode steps of one token per
// sequence, each appending its best token, and returns every decode step's
// logits, sequence after sequence.
class DecodeLoop {
 public:
  static constexpr int kPagesPerSequence = 16;

  DecodeLoop(engine::ModelRuntime& runtime, int sequences, int prompt_tokens, int vocab);
  std::vector<std::vector<float>> run(int steps);

 private:
  engine::ModelRuntime& runtime_;
  std::vector<std::vector<cache::TokenId>> tokens_;
};

// Page-table widths a DecodeLoop run visits, one recorded shape each.
int widths_visited(int prompt_tokens, int steps, int page_size);

}  // namespace quire::test
