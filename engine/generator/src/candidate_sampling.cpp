// Sampler's candidate path: the token sample() would draw from a whole row,
// decided from the row's k highest logits (LogitCandidates) when that can be
// proven, so that logits on a GPU need not cross to the host.
//
// What is known. Let K be the returned tokens and the adjusted ones (those
// that penalties, bias or bans change; their raw logits are gathered and
// adjusted exactly as sample() adjusts them, with the same code). Every other
// token that is not -inf, the set U, keeps its raw logit and ranks after b,
// the last returned token: its logit is at most b's, and equal only with a
// higher id. The device also counts U (finite) and sums exp over it
// (tail_sum).
//
// Exact cases, which run sample()'s own filters on the same list:
//   A. top-k cuts inside the tokens of K that rank before b: top-k's list is
//      known, and everything after it (softmax, top-p, min-p, typical, the
//      draw) sees exactly what sample() sees.
//   B. every token of U has a softmax weight of exactly 0 (b's weight
//      underflows, and weights fall with the logit): sample() erases them
//      in softmax, so it sees K's tokens in the same order with the same
//      weights.
//   Greedy: the best of K wins when it ranks before b (or is b).
// Bounded case C (no top-k cut, U has weight): top-p and min-p are decided
// from the weights of K and an interval for U's total weight; each decision
// must hold with a margin far wider than the float roundings of sample()
// (a few ulps) and the tail sum's stated tolerance, and the uniform number
// must fall clear of the boundaries between the tokens' shares. Typical
// sampling, or neither top-p nor min-p, falls back.
// Anything else (NaN anywhere, +inf with weight outside K, a top token that
// U might beat) falls back: the caller fetches the row and calls sample(),
// and the random number this path looked at is drawn there instead.
//
// DRY penalizes only tokens of the context, so adjusted_tokens() names the
// ones it penalizes here and their penalty is applied with the same code as
// sample()'s, after the other penalties. XTC runs inside filter(), so the
// exact cases A and B run it on the very list sample() runs it on, with the
// same number; C falls back while XTC is on. Top-nσ needs the mean and the
// deviation of the whole row, and mirostat's cut depends on the row's total
// weight: with either on, every row falls back.
//
// A token mask (structured output) removes K's masked tokens as bans do. Of
// U only an upper bound is known then (its count; the tail sum also holds
// masked tokens), so greedy and A (with top-k cutting strictly inside K's
// allowed tokens before b) stay exact, B holds when top-k's cut is decided
// either way whatever part of U is allowed, and C falls back.

#include <algorithm>
#include <cmath>
#include <limits>

#include "quire/engine/generator/sampler.h"
#include "sampling_filters.h"

namespace quire::engine {
namespace {

constexpr float kMinusInfinity = -std::numeric_limits<float>::infinity();
// A softmax argument below this gives exactly 0: glibc's expf returns 0 below
// -103.97, and e^-110 lies far under half the smallest subnormal float.
constexpr float kUnderflowArgument = -110.0f;
// Relative slack for sample()'s float roundings (softmax, up to three
// normalizations, the running sums): a few float ulps, 2^-21 at most; this
// is 8 times that.
constexpr double kRoundingSlack = 0x1.0p-18;

bool contains(std::span<const std::int32_t> sorted, std::int32_t id) {
  return std::binary_search(sorted.begin(), sorted.end(), id);
}

std::ptrdiff_t position(std::span<const std::int32_t> sorted, std::int32_t id) {
  const auto found = std::lower_bound(sorted.begin(), sorted.end(), id);
  return found != sorted.end() && *found == id ? found - sorted.begin() : -1;
}

// The interval that holds sample()'s total softmax weight of U, from the
// device's tail sum. tail_sum is relative to the raw maximum m and scaled by
// inv_temperature; sample() weighs U's tokens relative to the adjusted top.
struct TailWeight {
  double low = 0;
  double high = 0;
};

TailWeight tail_weight(const LogitCandidates& c, std::span<const float> adjusted_outside_raw,
                       std::int64_t unknown, float top, float temperature, float bound_weight) {
  const float m = c.values.front();
  // The device summed the adjusted tokens outside the returned ones too.
  double outside = 0;
  for (const float raw : adjusted_outside_raw) {
    if (raw == kMinusInfinity) continue;
    outside += std::exp(static_cast<double>((raw - m) * c.inv_temperature));
  }
  const double tail = c.tail_sum;
  const double spread = (c.tail_sum_tolerance + 1e-9) * tail;
  const double raw_low = std::max(0.0, tail - outside - spread);
  const double raw_high = std::max(0.0, tail - outside + spread);
  const double log_factor = (static_cast<double>(m) - static_cast<double>(top)) / temperature;
  const double factor = std::exp(log_factor);
  // Each term's float argument differs between the device's form and
  // sample()'s by a few roundings of arguments no larger than about 104 +
  // |log_factor| where either weight is not 0; terms that one side flushes
  // to 0 weigh under e^-103 (times the factor) on the other.
  const double relative = (216.0 + 2.0 * std::fabs(log_factor)) * 0x1.0p-22 + 0x1.0p-20;
  const double absolute = static_cast<double>(unknown) * std::exp(-103.0) * (1.0 + factor);
  TailWeight weight;
  weight.low = std::max(0.0, raw_low * factor * (1.0 - relative) - absolute);
  weight.high = raw_high * factor * (1.0 + relative) + absolute;
  // No token of U weighs more than b.
  weight.high =
      std::min(weight.high, static_cast<double>(unknown) * bound_weight * (1.0 + 0x1.0p-30));
  weight.low = std::min(weight.low, weight.high);
  return weight;
}

}  // namespace

int Sampler::candidates_wanted(std::int64_t vocab) const {
  // Penalties and bias reorder a few of the best tokens; the slack beyond
  // top_k keeps top-k's cut inside the ones that still rank before the last.
  std::int64_t wanted = 256;
  if (settings_.greedy()) {
    wanted = 8;
  } else if (settings_.top_k > 0) {
    wanted = std::int64_t{settings_.top_k} + 64;
  }
  // 1024: kernels::kMaxTopLogits, the most a backend returns per row.
  const std::int64_t most = std::max<std::int64_t>(1, std::min<std::int64_t>(vocab, 1024));
  return static_cast<int>(std::clamp<std::int64_t>(wanted, 1, most));
}

void Sampler::adjusted_tokens(std::span<const std::int32_t> context, std::int64_t vocab,
                              std::vector<std::int32_t>& out) {
  out.clear();
  const auto size = static_cast<std::size_t>(std::max<std::int64_t>(vocab, 0));
  const auto inside = [size](std::int32_t id) {
    return id >= 0 && static_cast<std::size_t>(id) < size;
  };
  if (penalties_on()) {
    count_context(context, size);
    for (const std::int32_t token : touched_) {
      out.push_back(token);
      counts_[static_cast<std::size_t>(token)] = 0;
    }
    touched_.clear();
  }
  if (settings_.dry_on()) {
    compute_dry_penalties(context, size);
    for (const auto& [token, penalty] : dry_penalties_)
      out.push_back(token);
  }
  for (const auto& [token, bias] : settings_.token_bias) {
    if (inside(token)) out.push_back(token);
  }
  for (const std::int32_t token : settings_.banned_tokens) {
    if (inside(token)) out.push_back(token);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
}

std::optional<std::int32_t> Sampler::sample_from_candidates(const LogitCandidates& c,
                                                            std::span<const std::int32_t> context,
                                                            TokenMask allowed) {
  const auto fallback = [this]() -> std::optional<std::int32_t> {
    ++candidate_fallbacks_;
    return std::nullopt;
  };
  const std::size_t k = c.values.size();
  if (c.vocab <= 0 || k == 0 || c.ids.size() != k ||
      c.adjusted_ids.size() != c.adjusted_logits.size() || c.nans > 0 ||
      (!settings_.greedy() && (settings_.top_n_sigma_on() || settings_.mirostat_on()))) {
    return fallback();
  }
  const auto size = static_cast<std::size_t>(c.vocab);
  logits_.clear();  // last_logits() has no row to show after this path

  // The adjusted tokens' logits, by the same steps as sample().
  adjusted_.assign(c.adjusted_logits.begin(), c.adjusted_logits.end());
  bool missing = false;
  if (penalties_on()) {
    count_context(context, size);
    for (const std::int32_t token : touched_) {
      const auto index = static_cast<std::size_t>(token);
      const std::ptrdiff_t at = position(c.adjusted_ids, token);
      if (at < 0) {
        missing = true;
      } else {
        adjusted_[static_cast<std::size_t>(at)] =
            penalized(adjusted_[static_cast<std::size_t>(at)], counts_[index]);
      }
      counts_[index] = 0;
    }
    touched_.clear();
  }
  if (settings_.dry_on()) {
    compute_dry_penalties(context, size);
    for (const auto& [token, penalty] : dry_penalties_) {
      const std::ptrdiff_t at = position(c.adjusted_ids, token);
      if (at < 0) {
        missing = true;
      } else {
        adjusted_[static_cast<std::size_t>(at)] -= penalty;
      }
    }
  }
  for (const auto& [token, bias] : settings_.token_bias) {
    if (token < 0 || static_cast<std::size_t>(token) >= size) continue;
    const std::ptrdiff_t at = position(c.adjusted_ids, token);
    if (at < 0) {
      missing = true;
    } else {
      adjusted_[static_cast<std::size_t>(at)] += bias;
    }
  }
  for (const std::int32_t token : settings_.banned_tokens) {
    if (token < 0 || static_cast<std::size_t>(token) >= size) continue;
    const std::ptrdiff_t at = position(c.adjusted_ids, token);
    if (at < 0) {
      missing = true;
    } else {
      adjusted_[static_cast<std::size_t>(at)] = kMinusInfinity;
    }
  }
  if (missing) return fallback();
  const bool masked = !allowed.empty();
  const auto refused = [&](std::int32_t id) { return masked && !mask_allows(allowed, id); };

  // K: the returned tokens, adjusted where they are adjusted, and the other
  // adjusted ones; -inf dropped as collect_candidates drops it.
  returned_.assign(c.ids.begin(), c.ids.end());
  std::sort(returned_.begin(), returned_.end());
  candidates_.clear();
  std::int64_t returned_finite = 0;
  for (std::size_t j = 0; j < k; ++j) {
    const float raw = c.values[j];
    if (std::isnan(raw)) return fallback();
    if (raw != kMinusInfinity) ++returned_finite;
    if (raw != kMinusInfinity && !contains(c.adjusted_ids, c.ids[j]) && !refused(c.ids[j])) {
      candidates_.push_back({c.ids[j], raw, 0.0f});
    }
  }
  std::int64_t outside_finite = 0;
  outside_raw_.clear();
  for (std::size_t a = 0; a < c.adjusted_ids.size(); ++a) {
    const float raw = c.adjusted_logits[a];
    const float logit = adjusted_[a];
    if (std::isnan(raw) || std::isnan(logit)) return fallback();
    if (!contains(returned_, c.adjusted_ids[a])) {
      outside_raw_.push_back(raw);
      if (raw != kMinusInfinity) ++outside_finite;
    }
    if (logit != kMinusInfinity && !refused(c.adjusted_ids[a])) {
      candidates_.push_back({c.adjusted_ids[a], logit, 0.0f});
    }
  }
  const std::int64_t unknown = std::int64_t{c.finite} - returned_finite - outside_finite;
  if (unknown < 0 || candidates_.empty()) return fallback();

  const SamplingCandidate bound{c.ids[k - 1], c.values[k - 1], 0.0f};
  // Whether a token of K is known to rank before every token of U.
  const auto certain = [&](const SamplingCandidate& x) {
    return unknown == 0 || !detail::ranks_before(bound, x);
  };

  std::sort(candidates_.begin(), candidates_.end(), detail::ranks_before);
  if (!certain(candidates_.front())) return fallback();
  if (settings_.greedy()) {
    // argmax: the first in ranking order, ties to the lower id.
    candidates_.resize(1);
    candidates_.front().probability = 1.0f;
    ++candidate_draws_;
    return candidates_.front().id;
  }

  const auto known_before_bound = static_cast<std::int64_t>(
      std::partition_point(candidates_.begin(), candidates_.end(), certain) - candidates_.begin());
  const std::int64_t total = static_cast<std::int64_t>(candidates_.size()) + unknown;
  const bool cut_by_k = settings_.top_k > 0 && settings_.top_k < total;
  const float top = candidates_.front().logit;
  const float temperature = settings_.temperature;

  Random probe = random_;
  const DrawNumbers numbers = draw_numbers(probe);
  const double u = numbers.draw;
  const auto exact = [&](bool ranked) -> std::optional<std::int32_t> {
    const std::int32_t token = filter_and_draw(ranked, numbers, size);
    random_ = probe;
    ++candidate_draws_;
    return token;
  };

  // A: top-k's list is known. Under a mask `total` only bounds the allowed
  // tokens, so top-k must keep strictly fewer than K's allowed tokens before
  // b for sample() to be sure to cut (and rank) too.
  if (cut_by_k &&
      (masked ? settings_.top_k < known_before_bound : settings_.top_k <= known_before_bound)) {
    candidates_.resize(static_cast<std::size_t>(settings_.top_k));
    return exact(true);
  }
  // B: U weighs exactly 0. Tokens of K after b weigh 0 too, so whether top-k
  // kept them does not matter; only the order of the list must match.
  const bool tail_is_zero =
      unknown == 0 || (std::isinf(top) ? !std::isinf(bound.logit)
                                       : (bound.logit - top) / temperature < kUnderflowArgument);
  if (tail_is_zero) {
    // Under a mask sample() cuts when top-k keeps fewer than its allowed
    // tokens, somewhere between K's and K's plus all of U.
    if (masked && unknown > 0 && settings_.top_k > 0 &&
        settings_.top_k >= static_cast<std::int64_t>(candidates_.size()) &&
        settings_.top_k < total) {
      return fallback();
    }
    if (!cut_by_k) {
      std::sort(candidates_.begin(), candidates_.end(),
                [](const SamplingCandidate& a, const SamplingCandidate& b) { return a.id < b.id; });
    }
    return exact(cut_by_k);
  }

  // C: bounded. sample() keeps every token until top-p or min-p cuts.
  const bool top_p_on = settings_.top_p > 0 && settings_.top_p < 1;
  const bool min_p_on = settings_.min_p > 0;
  const bool typical_on = settings_.typical > 0 && settings_.typical < 1;
  if (masked || cut_by_k || std::isinf(top) || typical_on || settings_.xtc_on() ||
      (!top_p_on && !min_p_on) || !std::isfinite(c.values.front()) ||
      c.inv_temperature != 1.0f / temperature) {
    return fallback();
  }
  // Softmax weights as sample() computes them; zeros are erased there, and
  // they form the end of the ranked list.
  for (SamplingCandidate& candidate : candidates_)
    candidate.probability = std::exp((candidate.logit - top) / temperature);
  std::erase_if(candidates_, [](const SamplingCandidate& x) { return x.probability <= 0.0f; });
  const auto certain_count =
      std::min<std::int64_t>(known_before_bound, static_cast<std::int64_t>(candidates_.size()));
  const float bound_weight = std::exp((bound.logit - top) / temperature);

  if (top_p_on) {
    double known = 0;
    for (const SamplingCandidate& candidate : candidates_)
      known += candidate.probability;
    const TailWeight tail = tail_weight(c, outside_raw_, unknown, top, temperature, bound_weight);
    const double sum_slack = static_cast<double>(total) * 0x1.0p-52 + 0x1.0p-50;
    const double z_low = (known + tail.low) * (1 - sum_slack);
    const double z_high = (known + tail.high) * (1 + sum_slack);
    const double p = settings_.top_p;
    // The cut: the first token whose running share reaches p for every
    // total in the interval, while the one before falls short for every one.
    double before = 0, running = 0;
    std::int64_t cut = -1;
    for (std::int64_t i = 0; i < certain_count; ++i) {
      running += candidates_[static_cast<std::size_t>(i)].probability;
      if (running * (1 - kRoundingSlack) >= p * z_high) {
        cut = i;
        break;
      }
      before = running;
    }
    if (cut < 0 || before * (1 + kRoundingSlack) >= p * z_low) return fallback();
    candidates_.resize(static_cast<std::size_t>(cut + 1));
  } else {
    // min-p alone: every token of U must fall below the threshold. The top
    // token weighs 1 (expf(0)).
    if (static_cast<double>(bound_weight) >=
        static_cast<double>(settings_.min_p) * (1 - kRoundingSlack)) {
      return fallback();
    }
    std::sort(candidates_.begin(), candidates_.end(),
              [](const SamplingCandidate& a, const SamplingCandidate& b) { return a.id < b.id; });
  }
  if (min_p_on) {
    float heaviest = 0;
    for (const SamplingCandidate& candidate : candidates_)
      heaviest = std::max(heaviest, candidate.probability);
    const double threshold = static_cast<double>(settings_.min_p) * heaviest;
    bool undecided = false;
    std::erase_if(candidates_, [&](const SamplingCandidate& x) {
      const double weight = x.probability;
      if (weight >= threshold * (1 + kRoundingSlack)) return false;
      if (weight >= threshold * (1 - kRoundingSlack)) undecided = true;
      return true;
    });
    if (undecided) return fallback();
  }

  // The draw: the first token whose share of the running sum exceeds u,
  // clear of u by the slack on both sides.
  cumulative_.clear();
  double sum = 0;
  for (const SamplingCandidate& candidate : candidates_) {
    sum += candidate.probability;
    cumulative_.push_back(sum);
  }
  const auto chosen = static_cast<std::size_t>(
      std::upper_bound(cumulative_.begin(), cumulative_.end(), u * sum) - cumulative_.begin());
  if (chosen >= cumulative_.size() || cumulative_[chosen] < (u + kRoundingSlack) * sum ||
      (chosen > 0 && cumulative_[chosen - 1] > (u - kRoundingSlack) * sum)) {
    return fallback();
  }
  for (SamplingCandidate& candidate : candidates_)
    candidate.probability = static_cast<float>(candidate.probability / sum);
  random_ = probe;
  ++candidate_draws_;
  return candidates_[chosen].id;
}

}  // namespace quire::engine
