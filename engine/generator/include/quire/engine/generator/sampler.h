#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <utility>
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
  // DRY ("don't repeat yourself", p-e-w): a token that would continue a
  // sequence already seen in the context, n tokens long with n at least
  // dry_allowed_length, loses dry_multiplier * dry_base^(n - allowed_length)
  // from its logit. Only the last dry_range tokens are searched (0: the whole
  // context). A match never runs across a token whose text contains one of
  // the breakers (the generator resolves them with the tokenizer:
  // Sampler::set_dry_breaker_tokens).
  float dry_multiplier = 0.0f;  // 0: off
  float dry_base = 1.75f;
  int dry_allowed_length = 2;
  int dry_range = 0;
  std::vector<std::string> dry_sequence_breakers{"\n", ":", "\"", "*"};
  // XTC ("exclude top choices", p-e-w): with probability xtc_probability per
  // draw, every token at least xtc_threshold likely goes except the least
  // likely of them (nothing happens with fewer than two).
  float xtc_threshold = 0.1f;    // above 0.5: off (two tokens cannot both pass)
  float xtc_probability = 0.0f;  // 0: off
  // Top-nσ (Tang et al. 2024): keeps the tokens whose logit lies within
  // top_n_sigma standard deviations of the highest.
  float top_n_sigma = 0.0f;  // 0 or less: off
  // Mirostat (Basu et al. 2021): 0 off, 2 for version 2, which keeps the
  // tokens whose surprise (-log2 p) is at most mu and steers mu towards a
  // surprise of mirostat_tau at the rate mirostat_eta. Replaces top-k,
  // top-p, min-p, typical, top-nσ and XTC while on.
  int mirostat = 0;
  float mirostat_tau = 5.0f;
  float mirostat_eta = 0.1f;
  // Without a seed each Sampler draws one from std::random_device.
  std::optional<std::uint64_t> seed;

  bool greedy() const { return temperature < 0.01f; }
  bool dry_on() const { return dry_multiplier > 0; }
  bool xtc_on() const { return xtc_probability > 0 && xtc_threshold <= 0.5f; }
  bool top_n_sigma_on() const { return top_n_sigma > 0; }
  bool mirostat_on() const { return mirostat == 2; }
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

// Chooses tokens. The order follows exllamav2, with the samplers it lacks
// placed where llama.cpp and text-generation-webui place them:
//   penalties (repetition, frequency, presence) -> DRY -> token bias ->
//   banned tokens -> the mask -> greedy argmax, or
//   top-nσ -> top-k -> softmax with temperature -> top-p -> min-p ->
//   typical -> XTC -> renormalize -> draw.
// Each filter renormalizes what it keeps, so a later one sees a distribution.
// DRY is a penalty on the context, so it sits with the others. Top-nσ keeps
// the logits within n standard deviations of the highest; scaling by the
// temperature scales both sides alike, so it runs on the unscaled logits and
// keeps exactly what the paper's temperature-scaled rule keeps, over the whole
// row (the statistics the paper defines) before top-k shortens it. XTC comes
// last, as in both references: it judges the distribution the other filters
// leave, after the temperature (text-generation-webui's choice).
// Mirostat v2 replaces every truncating filter (top-nσ, top-k, top-p, min-p,
// typical, XTC), as llama.cpp's sampler chain does: softmax with temperature
// -> keep the tokens whose surprise -log2(p) is at most mu (at least the
// likeliest) -> renormalize -> draw -> mu -= eta * (-log2 p(drawn) - tau),
// with p the renormalized probability. mu starts at 2 * tau and belongs to
// this sampler, so to one job. Penalties, DRY, bias, bans and the mask stay:
// they describe the request and the context, not a truncation.
//
// Random numbers: greedy settings consume none. Otherwise each draw consumes
// one for XTC when it is on (XTC acts when it is below xtc_probability), then
// one for the draw itself, whatever the filters leave.
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

  // DRY's sequence breakers as token ids: the tokens whose text contains one
  // of settings().dry_sequence_breakers (dry_breaker_tokens below). Without
  // a call no token breaks a match.
  void set_dry_breaker_tokens(std::vector<std::int32_t> ids);
  // Mirostat's current target surprise (2 * tau before the first draw).
  double mirostat_mu() const { return mirostat_mu_; }

  // Speculative sampling (Leviathan et al. 2023, Chen et al. 2023): whether
  // the drafted token `draft` stands at a position whose row is `logits`,
  // and if not, the token drawn instead, such that the token this returns is
  // distributed exactly as sample() on the same row and context would draw
  // it. p is the distribution sample() draws from (every setting applied:
  // last_candidates() holds it afterwards); q is `drafted_from`, the
  // distribution the drafter drew `draft` from, or a point mass on `draft`
  // when null. The draft is accepted with probability min(1, p(d) / q(d));
  // on rejection the token is drawn from max(0, p - q), renormalized (with
  // a point mass: p without d). Consumes XTC's number first when XTC is on
  // (p is then the distribution sample() draws from given that number, so
  // the mixture over it is sample()'s), one for the test and one more on
  // rejection, so a seed reproduces the verdicts. Mirostat's mu is updated
  // with the token that comes out, by its probability under p, as sample()
  // updates it. Greedy
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
  // sample(). See candidate_sampling.cpp for when the proof succeeds. DRY's
  // penalized tokens are among adjusted_tokens(); top-nσ (the row's mean and
  // deviation) and mirostat (the row's total weight decides its cut) always
  // fall back, so they cost a row fetch per token on a device. With
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
  // The random numbers of one draw (see the class comment).
  struct DrawNumbers {
    double xtc = 1;  // 1: XTC does not act
    double draw = 0;
  };
  DrawNumbers draw_numbers(Random& random) const;
  // Top-nσ and top-k on the collected candidates (neither under mirostat);
  // returns whether they are left ranked.
  bool cut_logits();
  // Softmax and the filters after it, on candidates_ (shared by every path);
  // `vocab` sizes typical sampling's scratch.
  void filter(bool ranked, std::size_t vocab, double xtc_number);
  // filter() and the draw, and mirostat's update.
  std::int32_t filter_and_draw(bool ranked, DrawNumbers numbers, std::size_t vocab);
  // Mirostat's step after token `id` of candidates_ came out.
  void update_mirostat(std::int32_t id);
  // DRY's penalty for each token that would continue a repeat, into
  // dry_penalties_ sorted by token (dry_penalty.cpp).
  void compute_dry_penalties(std::span<const std::int32_t> context, std::size_t size);
  // verify_draft's parts (draft_verification.cpp): q(draft), with q scaled
  // to sum to 1 and kept in draft_q_ by token; and the residual max(0, p - q)
  // in residual_.
  double load_draft_distribution(const DraftDistribution& q, std::int32_t draft);
  void residual_after_rejection(std::int32_t draft, bool point_mass);

  SamplingSettings settings_;
  Random random_;
  std::vector<float> logits_;
  std::vector<SamplingCandidate> candidates_;
  std::vector<std::int32_t> counts_;        // per token in the penalty window; zero between calls
  std::vector<std::int32_t> touched_;       // the tokens whose count is not zero
  std::vector<float> scores_;               // typical sampling's, by token id
  std::vector<std::int32_t> dry_breakers_;  // ascending
  std::vector<std::pair<std::int32_t, float>> dry_penalties_;
  std::vector<std::int32_t> dry_window_;   // the searched tokens, last first
  std::vector<std::int32_t> dry_matches_;  // Z-array over dry_window_
  double mirostat_mu_ = 0;
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

// The tokens, ascending, whose text contains one of `breakers` (DRY's
// sequence breakers, as llama.cpp matches them); `text(id)` is token id's text
// for ids in [0, vocab). Empty breakers match nothing.
std::vector<std::int32_t> dry_breaker_tokens(std::span<const std::string> breakers,
                                             std::int32_t vocab,
                                             const std::function<std::string(std::int32_t)>& text);

}  // namespace quire::engine
