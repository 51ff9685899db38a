#pragma once

#include <functional>
#include <vector>

#include "quire/cache/page_cache.h"
#include "quire/engine/runtime/model_runtime.h"

namespace quire::test {

// One conversation turn through the cache's bookkeeping: admission (reused
// and restored pages), prefill of what is new in page-aligned chunks, then
// `steps` greedy decode steps of one token. Appends every row of logits it
// gets to `logits`; returns the tokens with the decoded ones. The sequence
// is released at the end; its pages stay cached. Passes go through `run`
// where one is given.
// Runs one forward pass of a sequence; a test may make one fail first.
using PassRunner = std::function<engine::ForwardPass::Result(cache::SequenceId,
                                                             const engine::ForwardPass::Sequence&)>;

// The runtime's forward pass over `step` alone.
engine::ForwardPass::Result run_once(engine::ModelRuntime& runtime,
                                     const engine::ForwardPass::Sequence& step);

std::vector<cache::TokenId> converse_turn(engine::ModelRuntime& runtime,
                                          std::vector<cache::TokenId> tokens, int steps,
                                          std::vector<std::vector<float>>& logits,
                                          const PassRunner& run = {});

struct Conversation {
  std::vector<std::vector<float>> logits;
  cache::CacheStats stats;
  bool defragmented = false;
};

// Two conversations on a cache of 8 pages (vocabulary of at least 512): the
// second pushes some of the first's pages into the host tier, the first's
// second turn brings them back; then a defragmentation, where there is
// something to move, and a last turn over the moved pages.
Conversation converse(engine::ModelRuntime& runtime);

// QVERIFY that every row of logits is the same, bit for bit.
void compare_logits(const Conversation& actual, const Conversation& expected);

}  // namespace quire::test
