#pragma once

// Helpers shared by the suites of DRY, XTC, top-nσ and mirostat: settings
// with every other filter off, and the last draw's distribution by token.

#include <cmath>
#include <cstdint>
#include <map>
#include <vector>

#include "quire/engine/generator/sampler.h"

namespace quire::test {

// Temperature 1, no truncation, no penalties, a fixed seed.
inline engine::SamplingSettings plain_sampling() {
  engine::SamplingSettings settings;
  settings.temperature = 1;
  settings.top_k = 0;
  settings.top_p = 1;
  settings.min_p = 0;
  settings.typical = 1;
  settings.repetition_penalty = 1;
  settings.seed = 42;
  return settings;
}

// The probabilities the last draw chose among, by token.
inline std::map<std::int32_t, double> last_distribution(const engine::Sampler& sampler) {
  std::map<std::int32_t, double> out;
  for (const engine::SamplingCandidate& candidate : sampler.last_candidates())
    out[candidate.id] = candidate.probability;
  return out;
}

// softmax(logits / temperature) over `kept` (ids into logits), by token.
inline std::map<std::int32_t, double> softmax_over(const std::vector<float>& logits,
                                                   const std::vector<std::int32_t>& kept,
                                                   double temperature = 1) {
  std::map<std::int32_t, double> out;
  double total = 0;
  for (const std::int32_t id : kept) {
    out[id] = std::exp(static_cast<double>(logits[static_cast<std::size_t>(id)]) / temperature);
    total += out[id];
  }
  for (auto& [id, p] : out)
    p /= total;
  return out;
}

// Whether two distributions hold the same tokens with probabilities within
// `tolerance` of each other.
inline bool same_distribution(const std::map<std::int32_t, double>& a,
                              const std::map<std::int32_t, double>& b, double tolerance = 1e-6) {
  if (a.size() != b.size()) return false;
  for (const auto& [id, p] : a) {
    const auto found = b.find(id);
    if (found == b.end() || std::abs(found->second - p) > tolerance) return false;
  }
  return true;
}

}  // namespace quire::test
