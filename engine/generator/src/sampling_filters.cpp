#include "sampling_filters.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace quire::engine::detail {
namespace {

[[noreturn]] void throw_nan(std::size_t index) {
  throw std::invalid_argument("the logit of token " + std::to_string(index) +
                              " is NaN: the model's output is broken");
}

[[noreturn]] void throw_nothing_left(std::size_t vocabulary) {
  throw std::invalid_argument(
      vocabulary == 0 ? std::string("no logits to sample from")
                      : "every one of the " + std::to_string(vocabulary) +
                            " tokens is banned or has a logit of -inf; nothing can be sampled");
}

double total_probability(std::span<const SamplingCandidate> candidates) {
  double total = 0;
  for (const SamplingCandidate& candidate : candidates)
    total += candidate.probability;
  return total;
}

}  // namespace

bool ranks_before(const SamplingCandidate& a, const SamplingCandidate& b) {
  if (a.logit != b.logit) return a.logit > b.logit;
  return a.id < b.id;
}

void collect_candidates(std::span<const float> logits, std::vector<SamplingCandidate>& out) {
  out.clear();
  constexpr float kMinusInfinity = -std::numeric_limits<float>::infinity();
  for (std::size_t i = 0; i < logits.size(); ++i) {
    const float logit = logits[i];
    if (std::isnan(logit)) throw_nan(i);
    if (logit == kMinusInfinity) continue;
    out.push_back({static_cast<std::int32_t>(i), logit, 0.0f});
  }
  if (out.empty()) throw_nothing_left(logits.size());
}

std::size_t argmax(std::span<const float> logits) {
  std::size_t best = logits.size();
  for (std::size_t i = 0; i < logits.size(); ++i) {
    const float logit = logits[i];
    if (std::isnan(logit)) throw_nan(i);
    if (logit == -std::numeric_limits<float>::infinity()) continue;
    // Strictly greater: the first of equal maxima wins.
    if (best == logits.size() || logit > logits[best]) best = i;
  }
  if (best == logits.size()) throw_nothing_left(logits.size());
  return best;
}

bool keep_top_k(std::vector<SamplingCandidate>& candidates, int k) {
  const auto keep = static_cast<std::size_t>(k);
  if (keep >= candidates.size()) return false;
  // Selection is linear in the vocabulary; only the k survivors get sorted.
  std::nth_element(candidates.begin(), candidates.begin() + static_cast<std::ptrdiff_t>(keep),
                   candidates.end(), ranks_before);
  candidates.resize(keep);
  std::sort(candidates.begin(), candidates.end(), ranks_before);
  return true;
}

void apply_softmax(std::vector<SamplingCandidate>& candidates, float temperature) {
  float top = -std::numeric_limits<float>::infinity();
  for (const SamplingCandidate& candidate : candidates)
    top = std::max(top, candidate.logit);
  if (std::isinf(top)) {
    // +inf logits share all the probability; softmax would compute inf - inf.
    for (SamplingCandidate& candidate : candidates)
      candidate.probability = std::isinf(candidate.logit) ? 1.0f : 0.0f;
  } else {
    for (SamplingCandidate& candidate : candidates)
      candidate.probability = std::exp((candidate.logit - top) / temperature);
  }
  std::erase_if(candidates, [](const SamplingCandidate& c) { return c.probability <= 0.0f; });
  normalize(candidates);
}

bool keep_top_p(std::vector<SamplingCandidate>& candidates, float p, bool ranked) {
  const std::size_t count = candidates.size();
  std::size_t sorted = ranked ? count : 0;
  // Most of the probability usually sits in a few tokens: rank a small head
  // first and widen it only while it falls short of p, instead of sorting the
  // whole vocabulary.
  std::size_t head = std::min<std::size_t>(count, 64);
  for (;;) {
    if (sorted < head) {
      std::partial_sort(candidates.begin(), candidates.begin() + static_cast<std::ptrdiff_t>(head),
                        candidates.end(), ranks_before);
      sorted = head;
    }
    double cumulative = 0;
    for (std::size_t i = 0; i < head; ++i) {
      cumulative += candidates[i].probability;
      if (cumulative >= static_cast<double>(p)) {
        candidates.resize(i + 1);
        normalize(candidates);
        return true;
      }
    }
    // Rounding can leave the full sum a hair below p: then everything stays.
    if (head == count) return true;
    head = std::min(count, head * 8);
  }
}

void keep_min_p(std::vector<SamplingCandidate>& candidates, float min_p) {
  float top = 0;
  for (const SamplingCandidate& candidate : candidates)
    top = std::max(top, candidate.probability);
  const float threshold = min_p * top;
  const std::size_t before = candidates.size();
  std::erase_if(candidates,
                [threshold](const SamplingCandidate& c) { return c.probability < threshold; });
  if (candidates.size() != before) normalize(candidates);
}

void keep_typical(std::vector<SamplingCandidate>& candidates, float mass,
                  std::vector<float>& scores) {
  double entropy = 0;
  for (const SamplingCandidate& candidate : candidates) {
    const double p = candidate.probability;
    entropy -= p * std::log(p);  // every candidate has p > 0 after the softmax
  }
  for (const SamplingCandidate& candidate : candidates) {
    const double surprisal = -std::log(static_cast<double>(candidate.probability));
    scores[static_cast<std::size_t>(candidate.id)] =
        static_cast<float>(std::abs(surprisal - entropy));
  }
  std::sort(candidates.begin(), candidates.end(),
            [&scores](const SamplingCandidate& a, const SamplingCandidate& b) {
              const float score_a = scores[static_cast<std::size_t>(a.id)];
              const float score_b = scores[static_cast<std::size_t>(b.id)];
              if (score_a != score_b) return score_a < score_b;
              return ranks_before(a, b);
            });
  double cumulative = 0;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    cumulative += candidates[i].probability;
    if (cumulative >= static_cast<double>(mass)) {
      candidates.resize(i + 1);
      break;
    }
  }
  normalize(candidates);
}

void normalize(std::vector<SamplingCandidate>& candidates) {
  const double total = total_probability(candidates);
  if (total <= 0) return;
  for (SamplingCandidate& candidate : candidates)
    candidate.probability = static_cast<float>(candidate.probability / total);
}

std::size_t draw_index(std::span<const SamplingCandidate> candidates, double u) {
  const double target = u * total_probability(candidates);
  double cumulative = 0;
  std::size_t last_possible = 0;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (candidates[i].probability <= 0) continue;
    cumulative += candidates[i].probability;
    last_possible = i;
    if (cumulative > target) return i;
  }
  // Only rounding gets here (u just below 1): the last token that can be drawn.
  return last_possible;
}

}  // namespace quire::engine::detail
