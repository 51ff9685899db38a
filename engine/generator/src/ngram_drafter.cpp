#include "quire/engine/generator/ngram_drafter.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace quire::engine {

namespace {

constexpr int kLongestNgram = 64;

}  // namespace

void validate(const NgramSettings& settings) {
  if (settings.shortest < 1 || settings.shortest > settings.longest ||
      settings.longest > kLongestNgram) {
    throw std::invalid_argument(
        "the n-gram drafter's suffix lengths must satisfy 1 <= shortest <= longest <= " +
        std::to_string(kLongestNgram) + " (got shortest " + std::to_string(settings.shortest) +
        ", longest " + std::to_string(settings.longest) + ")");
  }
}

NgramDrafter::NgramDrafter(NgramSettings settings) : settings_(settings) {
  validate(settings_);
}

std::vector<cache::TokenId> NgramDrafter::draft(std::span<const cache::TokenId> history,
                                                int max_tokens) const {
  std::vector<cache::TokenId> proposal;
  if (max_tokens <= 0) return proposal;
  const std::size_t size = history.size();
  const int longest = static_cast<int>(
      std::min<std::size_t>(static_cast<std::size_t>(settings_.longest), size > 0 ? size - 1 : 0));
  for (int n = longest; n >= settings_.shortest; --n) {
    const auto length = static_cast<std::size_t>(n);
    const std::span<const cache::TokenId> suffix = history.last(length);
    // Occurrences that end before the last token, the most recent first:
    // at least one token follows each.
    for (std::size_t start = size - length; start-- > 0;) {
      if (!std::equal(suffix.begin(), suffix.end(), history.begin() + std::ptrdiff_t(start)))
        continue;
      // Copied as an overlapping copy: past the history's end the
      // continuation reads the draft itself, so a pattern that repeats
      // right up to the end is drafted for as long as asked.
      const std::size_t from = start + length;
      for (std::size_t i = 0; i < static_cast<std::size_t>(max_tokens); ++i) {
        const std::size_t at = from + i;
        proposal.push_back(at < size ? history[at] : proposal[at - size]);
      }
      return proposal;
    }
  }
  return proposal;
}

}  // namespace quire::engine
