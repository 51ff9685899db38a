#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "quire/cache/types.h"

namespace quire::engine {

// Prompt lookup: the tokens that followed the last time the reply's most
// recent tokens appeared earlier in the conversation. Free to compute and
// often right where a reply repeats its input (code rewritten with a
// change, quotes, lists, JSON keys).
struct NgramSettings {
  int longest = 4;   // the longest suffix looked up, in tokens
  int shortest = 1;  // the shortest one worth a draft
};

// Throws std::invalid_argument naming the setting out of range
// (1 <= shortest <= longest <= 64).
void validate(const NgramSettings& settings);

// Stateless: each call looks at the whole history, so a job may switch
// drafters, or be preempted and resumed, without any state to keep right.
class NgramDrafter {
 public:
  explicit NgramDrafter(NgramSettings settings = {});

  // Up to `max_tokens` tokens to follow `history` (the prompt and every
  // token generated, the last one included): for the longest n from
  // settings.longest down to settings.shortest whose last n tokens of
  // `history` occur earlier, the tokens after the most recent such
  // occurrence, `max_tokens` of them: an overlapping copy, so where those
  // run past the history's end they go on with the draft itself (after
  // "a b a b" the suffix "a b" recurs at the start and the draft is
  // "a b a b ..."). Empty when no suffix recurs or max_tokens <= 0.
  std::vector<cache::TokenId> draft(std::span<const cache::TokenId> history, int max_tokens) const;

  const NgramSettings& settings() const { return settings_; }

 private:
  NgramSettings settings_;
};

}  // namespace quire::engine
