// The filters people tune beyond exllamav2's set: top-nσ, mirostat v2's cut
// and XTC (the sampler's order and random numbers: sampler.h).

#include <algorithm>
#include <cmath>

#include "sampling_filters.h"

namespace quire::engine::detail {

void keep_top_n_sigma(std::vector<SamplingCandidate>& candidates, float n) {
  if (candidates.size() < 2) return;
  double highest = -INFINITY;
  double sum = 0;
  for (const SamplingCandidate& candidate : candidates) {
    if (std::isinf(candidate.logit)) return;  // only +inf: -inf is never a candidate
    highest = std::max(highest, static_cast<double>(candidate.logit));
    sum += candidate.logit;
  }
  const double count = static_cast<double>(candidates.size());
  const double mean = sum / count;
  double squares = 0;
  for (const SamplingCandidate& candidate : candidates) {
    const double deviation = static_cast<double>(candidate.logit) - mean;
    squares += deviation * deviation;
  }
  const double floor = highest - static_cast<double>(n) * std::sqrt(squares / count);
  std::erase_if(candidates, [floor](const SamplingCandidate& candidate) {
    return static_cast<double>(candidate.logit) < floor;
  });
}

void keep_within_surprise(std::vector<SamplingCandidate>& candidates, double mu) {
  const auto likeliest = std::min_element(candidates.begin(), candidates.end(), ranks_before);
  const SamplingCandidate kept_anyway = *likeliest;
  const std::size_t before = candidates.size();
  std::erase_if(candidates, [mu](const SamplingCandidate& candidate) {
    return -std::log2(static_cast<double>(candidate.probability)) > mu;
  });
  if (candidates.empty()) candidates.push_back(kept_anyway);
  if (candidates.size() != before) normalize(candidates);
}

void exclude_top_choices(std::vector<SamplingCandidate>& candidates, float threshold) {
  std::size_t above = 0;
  const SamplingCandidate* least = nullptr;
  for (const SamplingCandidate& candidate : candidates) {
    if (candidate.probability < threshold) continue;
    ++above;
    if (least == nullptr || ranks_before(*least, candidate)) least = &candidate;
  }
  if (above < 2 || least == nullptr) return;
  const std::int32_t kept = least->id;
  std::erase_if(candidates, [threshold, kept](const SamplingCandidate& candidate) {
    return candidate.probability >= threshold && candidate.id != kept;
  });
  normalize(candidates);
}

}  // namespace quire::engine::detail
