#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <vector>

#include "quire/engine/generator/draft_proposal.h"
#include "quire/engine/generator/random.h"

namespace quire::engine {

// How the next token is chosen from a row of logits. The defaults are
// exllamav2's. A filter whose value says "off" costs nothing.
struct SamplingSettings {
  float temperature = 0.8f;           // below 0.01: greedy (argmax)
  int top_k = 50;                     // 0: off
  float top_p = 0.8f;                 // 1: off
  float min_p = 0.0f;                 // 0: off
  float typical = 1.0f;               // 1: off
  float repetition_penalty = 1.025f;  // 1: off
  int penalty_range = 1024;  // tokens back that the penalties look at; 0: the whole context
  float frequency_penalty = 0.0f;
  float presence_penalty = 0.0f;
  std::map<std::int32_t, float> token_bias;  // added to the logit
  std::vector<std::int32_t> banned_tokens;
  // Without a seed each Sampler draws one from std::random_device.
  std::optional<std::uint64_t> seed;

  bool greedy() const { return temperature < 0.01f; }
  // Pure argmax: no penalties, no filters.
  static SamplingSettings greedy_settings();
};

// Which tokens a draw may choose: bit (id % 32) of word id / 32 is set when
// token id is allowed; ids past the last word are not. An empty span allows
// every token. Structured output passes a grammar's mask (grammar::TokenMatcher).
using TokenMask = std::span<const std::uint32_t>;

// Whether `mask` (not empty) allows token `id`.
inline bool mask_allows(TokenMask mask, std::int32_t id) {
  const auto word = static_cast<std::size_t>(id) / 32;
  return id >= 0 && word < mask.size() && ((mask[word] >> (id % 32)) & 1u) != 0;
}

// A token the last draw chose among, with its final (renormalized) probability.
struct SamplingCandidate {
  std::int32_t id = 0;
  float logit = 0;  // after penalties, bias and bans, before the temperature
  float probability = 0;
};

// Speculative sampling's answer for one drafted position (Sampler::verify_draft).
struct DraftVerdict {
  bool accepted = false;
  // The draft when accepted; otherwise the token drawn in its place, after
  // which the job's drafts stop.
  std::int32_t token = 0;
};

// One row of logits as the candidate path sees it (Sampler::sample_from_candidates):
// the k highest raw logits, the raw logits of the tokens that penalties, bias
// or bans change, and what the device counted and summed over the rest
// (kernels' TopLogitsStats). Every token not in `ids` ranks after the last of
// them: a lower logit, or the same logit and a higher id.
struct LogitCandidates {
  std::int64_t vocab = 0;
  std::span<const float> values;      // ranked: highest first, ties to the lower id
  std::span<const std::int32_t> ids;  // the tokens of `values`
  // Over the tokens not in `ids` whose logit is neither NaN nor -inf: the sum
  // of exp((logit - values[0]) * inv_temperature), good to within
  // tail_sum_tolerance relative.
  float tail_sum = 0;
  float inv_temperature = 1;
  double tail_sum_tolerance = 0;
  std::int32_t finite = 0;  // tokens in the row whose logit is neither NaN nor -inf
  std::int32_t nans = 0;    // tokens in the row whose logit is NaN
  // The tokens adjusted_tokens() named for this context, and their raw logits.
  std::span<const std::int32_t> adjusted_ids;
  std::span<const float> adjusted_logits;
};

// Chooses tokens, exllamav2's order: penalties (repetition, frequency,
// presence) -> token bias -> banned tokens -> greedy argmax, or softmax with
// temperature -> top-k -> top-p -> min-p -> typical -> renormalize -> draw.
// Each filter renormalizes what it keeps, so a later one sees a distribution.
//
// Reproducible: the same seed, settings, logits and context give the same
// tokens on every machine. Ranking ties are broken by the lower id, and the
// draw walks the candidates in a fixed order. (Only a libm whose expf rounds
// differently could move a draw that falls exactly on a boundary.)
//
// The scratch vectors are reused across calls, so sampling allocates only
// while the vocabulary grows. Not thread-safe; one sampler per job.
class Sampler {
 public:
  // Throws std::invalid_argument for a setting outside its range, naming it.
  explicit Sampler(const SamplingSettings& settings);

  // `context` is the prompt and what has been generated so far; the penalties
  // look at its last penalty_range tokens. Ids in the context, the bias or the
  // bans that lie outside the logits are ignored (settings may outlive a
  // model). Throws std::invalid_argument, and draws nothing, when no token is
  // left to choose (empty logits, every token banned or -inf) or when a token
  // that is not banned has a NaN logit: both mean the request or the model's
  // output is broken, and inventing a token would hide that.
  // Tokens `allowed` does not allow get -inf after the bans, before any
  // transform (greedy argmax, softmax and every filter), as if banned.
  std::int32_t sample(std::span<const float> logits, std::span<const std::int32_t> context,
                      TokenMask allowed = {});

  // Speculative sampling (Leviathan et al. 2023, Chen et al. 2023): whether
  // the drafted token `draft` stands at a position whose row is `logits`,
  // and if not, the token drawn instead, such that the token this returns is
  // distributed exactly as sample() on the same row and context would draw
  // it. p is the distribution sample() draws from (every setting applied:
  // last_candidates() holds it afterwards); q is `drafted_from`, the
  // distribution the drafter drew `draft` from, or a point mass on `draft`
  // when null. The draft is accepted with probability min(1, p(d) / q(d));
  // on rejection the token is drawn from max(0, p - q), renormalized (with
  // a point mass: p without d). Consumes one random number for the test and
  // one more on rejection, so a seed reproduces the verdicts. Greedy
  // settings accept exactly when the draft is the argmax and consume none.
  // Throws std::invalid_argument as sample() does, and for a malformed
  // `drafted_from` (lengths that differ, a negative id, a probability that
  // is negative or not finite, a token of the row listed twice with a
  // probability above 0, or none above 0 for the draft itself). Ids past
  // the row are allowed (a drafter's vocabulary may be padded further):
  // p gives them nothing, so they are never the token that comes out.
  DraftVerdict verify_draft(std::span<const float> logits, std::span<const std::int32_t> context,
                            std::int32_t draft, const DraftDistribution* drafted_from = nullptr);

  // The candidate path, for logits that stay on a device. How many of the
  // highest logits it asks for: enough that top-k, top-p and min-p usually
  // cut inside them.
  int candidates_wanted(std::int64_t vocab) const;
  // The tokens, ascending and inside [0, vocab), whose logits the penalties,
  // the bias or the bans change for this context: their raw logits come with
  // the candidates.
  void adjusted_tokens(std::span<const std::int32_t> context, std::int64_t vocab,
                       std::vector<std::int32_t>& out);
  // The token sample() would draw from the whole row, the same random number
  // consumed, when the candidates prove which one that is. Otherwise
  // std::nullopt, with nothing consumed: the caller fetches the row and calls
  // sample(). See candidate_sampling.cpp for when the proof succeeds. With
  // a mask, the token sample() would draw with the same mask.
  std::optional<std::int32_t> sample_from_candidates(const LogitCandidates& candidates,
                                                     std::span<const std::int32_t> context,
                                                     TokenMask allowed = {});
  // How many rows sample_from_candidates decided, and how many it left to sample().
  std::int64_t candidate_draws() const { return candidate_draws_; }
  std::int64_t candidate_fallbacks() const { return candidate_fallbacks_; }

  const SamplingSettings& settings() const { return settings_; }
  // The logits of the last sample() call after penalties, bias and bans;
  // empty after a draw from candidates.
  std::span<const float> last_logits() const { return logits_; }
  // The tokens the last call drew from, in ranking order (ids ascending when
  // no filter ranked them), probabilities summing to 1. Greedy: the one token.
  std::span<const SamplingCandidate> last_candidates() const { return candidates_; }

 private:
  // Counts the context's tokens inside [0, size) over the penalty range into
  // counts_ and touched_; the caller resets both.
  void count_context(std::span<const std::int32_t> context, std::size_t size);
  bool penalties_on() const;
  void apply_penalties(std::span<const std::int32_t> context);
  // One penalized logit; out of line so both paths round alike.
  float penalized(float logit, std::int32_t count) const;
  // logits_ from the row: penalties, bias, bans and the mask applied.
  void adjust_logits(std::span<const float> logits, std::span<const std::int32_t> context,
                     TokenMask allowed);
  // Softmax and the filters after it, on candidates_ (shared by every path);
  // `vocab` sizes typical sampling's scratch.
  void filter(bool ranked, std::size_t vocab);
  // filter() and the draw.
  std::int32_t filter_and_draw(bool ranked, double u, std::size_t vocab);
  // verify_draft's parts (draft_verification.cpp): q(draft), with q scaled
  // to sum to 1 and kept in draft_q_ by token; and the residual max(0, p - q)
  // in residual_.
  double load_draft_distribution(const DraftDistribution& q, std::int32_t draft);
  void residual_after_rejection(std::int32_t draft, bool point_mass);

  SamplingSettings settings_;
  Random random_;
  std::vector<float> logits_;
  std::vector<SamplingCandidate> candidates_;
  std::vector<std::int32_t> counts_;   // per token in the penalty window; zero between calls
  std::vector<std::int32_t> touched_;  // the tokens whose count is not zero
  std::vector<float> scores_;          // typical sampling's, by token id
  // verify_draft's scratch: q by token id (zero between calls) and the
  // candidates with the residual's probabilities.
  std::vector<float> draft_q_;
  std::vector<std::int32_t> draft_q_ids_;
  std::vector<SamplingCandidate> residual_;
  // The candidate path's scratch (candidate_sampling.cpp).
  std::vector<std::int32_t> returned_;  // the candidates' ids, ascending
  std::vector<float> adjusted_;         // by position in LogitCandidates::adjusted_ids
  std::vector<float> outside_raw_;      // raw logits of adjusted tokens not among the returned
  std::vector<double> cumulative_;
  std::int64_t candidate_draws_ = 0;
  std::int64_t candidate_fallbacks_ = 0;
};

}  // namespace quire::engine
