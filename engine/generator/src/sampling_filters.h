#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "quire/engine/generator/sampler.h"

// The steps of Sampler::sample after penalties, bias and bans, each working
// in place on the candidate list. "Ranked" means ordered by logit, highest
// first, ties by the lower id: a strict total order, so partial sorts and
// selections give the same result with every standard library.
namespace quire::engine::detail {

bool ranks_before(const SamplingCandidate& a, const SamplingCandidate& b);

// Every token whose logit is not -inf, in id order; +inf logits are kept.
// Throws std::invalid_argument for a NaN and when no token is left.
void collect_candidates(std::span<const float> logits, std::vector<SamplingCandidate>& out);

// The index of the highest logit, ties to the lowest id (torch.argmax).
// Throws like collect_candidates.
std::size_t argmax(std::span<const float> logits);

// Keeps the k highest logits and leaves them ranked. Returns false, and
// leaves the list as it was, when k keeps every candidate: ranking the whole
// vocabulary would be wasted if no later filter needs it.
bool keep_top_k(std::vector<SamplingCandidate>& candidates, int k);

// softmax(logit / temperature), normalized. Tokens whose probability
// underflows to zero are dropped: no draw could pick them.
void apply_softmax(std::vector<SamplingCandidate>& candidates, float temperature);

// The smallest ranked prefix whose probability reaches p (at least one
// token). Ranks the candidates as far as needed; returns whether the whole
// remaining list is ranked afterwards.
bool keep_top_p(std::vector<SamplingCandidate>& candidates, float p, bool ranked);

// Keeps the tokens at least min_p times as likely as the likeliest; order kept.
void keep_min_p(std::vector<SamplingCandidate>& candidates, float min_p);

// Locally typical sampling: orders the tokens by how far their surprisal
// (-log p) lies from the distribution's entropy, closest first, and keeps the
// shortest prefix of that order whose probability reaches `mass` (at least
// one). `scores` is scratch indexed by token id, at least as long as the
// vocabulary.
void keep_typical(std::vector<SamplingCandidate>& candidates, float mass,
                  std::vector<float>& scores);

// Top-nσ: keeps the candidates whose logit is at least the highest minus n
// population standard deviations of all the candidates' logits (doubles,
// summed in list order). Leaves the list alone when a logit is +inf (those
// take all the probability anyway). Order kept; never empties the list.
void keep_top_n_sigma(std::vector<SamplingCandidate>& candidates, float n);

// Mirostat v2's cut, on normalized probabilities: keeps the candidates whose
// surprise -log2(p) is at most mu, or the likeliest alone when none is.
// Order kept; renormalizes what it keeps.
void keep_within_surprise(std::vector<SamplingCandidate>& candidates, double mu);

// XTC's removal, on normalized probabilities: when two or more candidates are
// at least `threshold` likely, removes all of them but the least likely (the
// one ranking last); renormalizes. Order kept.
void exclude_top_choices(std::vector<SamplingCandidate>& candidates, float threshold);

// Scales the probabilities to sum to 1.
void normalize(std::vector<SamplingCandidate>& candidates);

// The candidate at which the running sum of probabilities first exceeds
// u (in [0, 1)) times their total.
std::size_t draw_index(std::span<const SamplingCandidate> candidates, double u);

}  // namespace quire::engine::detail
