// DRY, "don't repeat yourself" (p-e-w, text-generation-webui #5677; llama.cpp
// has the same rule): a token that would extend a sequence already present in
// the context is penalized, the more the longer that sequence is.
//
// Let w be the searched tokens (the last dry_range of the context) and n its
// length. For each earlier position i < n - 1, the match length m(i) is the
// longest common suffix of w[0..i] and the whole of w: that many tokens
// before w[i + 1] repeat the tokens the context ends with, so drawing
// w[i + 1] now would continue the repeat. A token gets the penalty of its
// longest match when that is at least allowed_length:
//   multiplier * base^(m - allowed_length).
// Sequence breakers cap the match: m never reaches past the last breaker in
// w (the matched tokens equal the context's last ones, so a match that held
// a breaker would need one among those), and a breaker itself is never
// penalized. The exponent is capped where the penalty would overflow a float.
//
// Match lengths come from the Z-algorithm over w reversed (r[j] = w[n-1-j]):
// Z[j], the longest common prefix of r and r[j..], is m(n - 1 - j), so the
// whole window costs O(n) per draw.

#include <algorithm>
#include <cmath>

#include "quire/engine/generator/sampler.h"

namespace quire::engine {
namespace {

// ln(FLT_MAX): base^exponent stays finite while exponent * ln(base) is below it.
constexpr double kLogFloatMax = 88.7228391;

}  // namespace

void Sampler::compute_dry_penalties(std::span<const std::int32_t> context, std::size_t size) {
  dry_penalties_.clear();
  const auto range = static_cast<std::size_t>(settings_.dry_range);
  const std::size_t begin = range > 0 && context.size() > range ? context.size() - range : 0;
  const std::span<const std::int32_t> window = context.subspan(begin);
  const std::size_t n = window.size();
  if (n < 2) return;
  const auto is_breaker = [this](std::int32_t id) {
    return std::binary_search(dry_breakers_.begin(), dry_breakers_.end(), id);
  };
  // The longest a match may be: the tokens after the last breaker.
  std::size_t limit = 0;
  while (limit < n && !is_breaker(window[n - 1 - limit]))
    ++limit;
  const auto allowed = static_cast<std::size_t>(settings_.dry_allowed_length);
  if (limit < allowed) return;

  dry_window_.assign(window.rbegin(), window.rend());
  dry_matches_.assign(n, 0);
  const std::vector<std::int32_t>& r = dry_window_;
  std::size_t left = 0, right = 0;  // the rightmost [left, right) matching a prefix of r
  for (std::size_t j = 1; j < n; ++j) {
    std::size_t z = 0;
    if (j < right) {
      z = std::min(right - j, static_cast<std::size_t>(dry_matches_[j - left]));
    }
    while (j + z < n && r[z] == r[j + z])
      ++z;
    dry_matches_[j] = static_cast<std::int32_t>(z);
    if (j + z > right) {
      left = j;
      right = j + z;
    }
  }

  const double base = settings_.dry_base;
  const double max_exponent = base > 1 ? kLogFloatMax / std::log(base) : 0;
  for (std::size_t j = 1; j < n; ++j) {
    const std::size_t match = std::min(static_cast<std::size_t>(dry_matches_[j]), limit);
    if (match < allowed) continue;
    const std::int32_t next = r[j - 1];  // w[n - j], the token after the match
    if (next < 0 || static_cast<std::size_t>(next) >= size || is_breaker(next)) continue;
    double exponent = static_cast<double>(match - allowed);
    if (base > 1) exponent = std::min(exponent, max_exponent);
    const auto penalty = static_cast<float>(static_cast<double>(settings_.dry_multiplier) *
                                            std::pow(base, exponent));
    dry_penalties_.emplace_back(next, penalty);
  }
  // One entry per token, its largest penalty (the longest match).
  std::sort(dry_penalties_.begin(), dry_penalties_.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first < b.first : a.second > b.second;
  });
  dry_penalties_.erase(std::unique(dry_penalties_.begin(), dry_penalties_.end(),
                                   [](const auto& a, const auto& b) { return a.first == b.first; }),
                       dry_penalties_.end());
}

std::vector<std::int32_t> dry_breaker_tokens(std::span<const std::string> breakers,
                                             std::int32_t vocab,
                                             const std::function<std::string(std::int32_t)>& text) {
  std::vector<std::int32_t> ids;
  if (breakers.empty()) return ids;
  for (std::int32_t id = 0; id < vocab; ++id) {
    const std::string token = text(id);
    if (token.empty()) continue;
    for (const std::string& breaker : breakers) {
      if (!breaker.empty() && token.find(breaker) != std::string::npos) {
        ids.push_back(id);
        break;
      }
    }
  }
  return ids;
}

}  // namespace quire::engine
