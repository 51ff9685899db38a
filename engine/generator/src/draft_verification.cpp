// Speculative sampling's rejection rule, the sampler's side: a drafted token
// d stands with probability min(1, p(d) / q(d)), and a rejected one is
// replaced by a draw from max(0, p - q), renormalized. Whatever q is, the
// token that comes out is distributed as p: a rejection happens with
// probability R = sum over y of max(0, q(y) - p(y)), which equals the sum of
// max(0, p(y) - q(y)) since both sum to 1, so token x comes out with
// probability q(x) min(1, p(x) / q(x)) + R max(0, p(x) - q(x)) / R
// = min(q(x), p(x)) + max(0, p(x) - q(x)) = p(x) (Leviathan et al. 2023,
// appendix A). With a point mass q on d: keep d with probability p(d),
// otherwise draw from p without d.
//
// p is built by the very code sample() draws with (adjust_logits, the
// candidates, cut_logits() and filter()), so every setting (temperature,
// top-nσ, top-k, top-p, min-p, typical, XTC, mirostat's current mu,
// penalties and DRY in this context, bias, bans) shapes it exactly as it
// shapes a draw, and last_candidates() shows it afterwards. XTC's number is
// drawn first, as sample() draws it: given that number p is exactly what
// sample() would draw from, so the token is distributed as sample()'s for
// every value of it, hence overall.

#include <cmath>
#include <stdexcept>
#include <string>

#include "quire/engine/generator/sampler.h"
#include "sampling_filters.h"

namespace quire::engine {

DraftVerdict Sampler::verify_draft(std::span<const float> logits,
                                   std::span<const std::int32_t> context, std::int32_t draft,
                                   const DraftDistribution* drafted_from) {
  adjust_logits(logits, context, {});
  if (settings_.greedy()) {
    // p is a point mass on the argmax: the draft stands exactly when it is
    // that token, and no randomness is needed either way.
    const std::size_t best = detail::argmax(logits_);
    candidates_.assign(1, {static_cast<std::int32_t>(best), logits_[best], 1.0f});
    const auto token = static_cast<std::int32_t>(best);
    return {token == draft, token};
  }

  detail::collect_candidates(logits_, candidates_);
  const bool ranked = cut_logits();
  const double xtc_number = settings_.xtc_on() ? random_.uniform() : 1.0;
  filter(ranked, logits_.size(), xtc_number);

  double p_draft = 0;
  for (const SamplingCandidate& candidate : candidates_) {
    if (candidate.id == draft) p_draft = candidate.probability;
  }
  const double q_draft = drafted_from ? load_draft_distribution(*drafted_from, draft) : 1.0;
  // u < p(d) / q(d), without the division.
  const double u = random_.uniform();
  const bool accepted = u * q_draft < p_draft;
  if (!accepted) residual_after_rejection(draft, drafted_from == nullptr);
  for (const std::int32_t id : draft_q_ids_)
    draft_q_[static_cast<std::size_t>(id)] = 0;
  draft_q_ids_.clear();
  if (accepted) {
    update_mirostat(draft);
    return {true, draft};
  }
  const std::int32_t token = residual_[detail::draw_index(residual_, random_.uniform())].id;
  update_mirostat(token);
  return {false, token};
}

double Sampler::load_draft_distribution(const DraftDistribution& q, std::int32_t draft) {
  const std::size_t vocab = logits_.size();
  if (q.ids.size() != q.probabilities.size()) {
    throw std::invalid_argument("a draft distribution lists " + std::to_string(q.ids.size()) +
                                " tokens but " + std::to_string(q.probabilities.size()) +
                                " probabilities; the drafter must give one per token");
  }
  // Checked before anything is written, so that a refusal leaves no scratch behind.
  double total = 0;
  double listed_draft = 0;
  for (std::size_t i = 0; i < q.ids.size(); ++i) {
    const std::int32_t id = q.ids[i];
    const float probability = q.probabilities[i];
    if (id < 0) {
      throw std::invalid_argument("a draft distribution names token " + std::to_string(id) +
                                  "; token ids are not negative");
    }
    if (!std::isfinite(probability) || probability < 0) {
      throw std::invalid_argument("a draft distribution gives token " + std::to_string(id) +
                                  " the probability " + std::to_string(probability) +
                                  "; probabilities must be finite and not negative");
    }
    total += probability;
    if (id == draft) listed_draft += probability;
  }
  if (!(listed_draft > 0)) {
    throw std::invalid_argument("the drafted token " + std::to_string(draft) +
                                " has no probability in the distribution it was drafted from; "
                                "a drafter must draw its tokens from the distribution it reports");
  }
  // Tokens past the row (a draft model's vocabulary may be padded further
  // than the model's) keep their share of q: p gives them nothing, so they
  // only make a rejection likelier, as they should, and never come out.
  if (draft_q_.size() < vocab) draft_q_.resize(vocab, 0.0f);
  for (std::size_t i = 0; i < q.ids.size(); ++i) {
    const auto id = static_cast<std::size_t>(q.ids[i]);
    // A token listed with probability 0 is as good as not listed.
    if (id >= vocab || q.probabilities[i] == 0) continue;
    if (draft_q_[id] != 0) {
      for (const std::int32_t loaded : draft_q_ids_)
        draft_q_[static_cast<std::size_t>(loaded)] = 0;
      draft_q_ids_.clear();
      throw std::invalid_argument("a draft distribution lists token " + std::to_string(id) +
                                  " twice; each token must appear once");
    }
    draft_q_[id] = static_cast<float>(static_cast<double>(q.probabilities[i]) / total);
    draft_q_ids_.push_back(q.ids[i]);
  }
  return listed_draft / total;
}

void Sampler::residual_after_rejection(std::int32_t draft, bool point_mass) {
  residual_.assign(candidates_.begin(), candidates_.end());
  double total = 0;
  for (SamplingCandidate& candidate : residual_) {
    const double q = point_mass
                         ? (candidate.id == draft ? 1.0 : 0.0)
                         : static_cast<double>(draft_q_[static_cast<std::size_t>(candidate.id)]);
    const double left = static_cast<double>(candidate.probability) - q;
    candidate.probability = left > 0 ? static_cast<float>(left) : 0.0f;
    total += candidate.probability;
  }
  // In exact arithmetic a rejection leaves mass: it needs p(d) < q(d), so p
  // exceeds q somewhere else. Rounding alone could leave none; p itself is
  // then the closest draw.
  if (!(total > 0)) residual_.assign(candidates_.begin(), candidates_.end());
}

}  // namespace quire::engine
