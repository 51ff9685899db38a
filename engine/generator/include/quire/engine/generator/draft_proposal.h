#pragma once

#include <cstdint>
#include <vector>

namespace quire::engine {

// Speculative sampling's q for one drafted position: the distribution the
// drafter drew that position's token from, given the tokens before it. Sparse:
// the tokens it could have drawn and their probabilities; every token not
// listed has probability 0. A draft model that samples with top-k or top-p
// usually lists a few candidates; a dense distribution lists every token.
// The probabilities need not sum to exactly 1 (they are scaled to), but the
// drafted token must be among them with a probability above 0. Ids past the
// model's vocabulary (a draft model's padding) may be listed: the model never
// chooses them, so such a draft is always turned down.
struct DraftDistribution {
  std::vector<std::int32_t> ids;
  std::vector<float> probabilities;  // one per id, finite and not negative
};

// What a drafter proposes for one step: the tokens to follow the job's last
// token, and how it chose them. A drafter that samples (a draft model) gives
// one distribution per token, so that sampled jobs verify with the rejection
// rule min(1, p / q) and keep the target's distribution exactly. A drafter
// that proposes tokens without a distribution (prompt lookup) leaves
// `distributions` empty: q is then a point mass on each token. Greedy jobs
// verify by equality either way and ignore the distributions.
struct DraftProposal {
  std::vector<std::int32_t> tokens;
  std::vector<DraftDistribution> distributions;  // empty, or one per token
};

}  // namespace quire::engine
