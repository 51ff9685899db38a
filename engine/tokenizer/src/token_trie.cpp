#include "token_trie.h"

#include <algorithm>

namespace quire::engine::detail {

void TokenTrie::insert(std::string_view text, std::int32_t value) {
  if (text.empty()) return;  // an empty token would match everywhere
  std::uint32_t node = 0;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    auto& children = nodes_[node].children;
    const auto it = std::find_if(children.begin(), children.end(),
                                 [byte](const auto& child) { return child.first == byte; });
    if (it != children.end()) {
      node = it->second;
    } else {
      const auto next = static_cast<std::uint32_t>(nodes_.size());
      nodes_[node].children.emplace_back(byte, next);
      nodes_.emplace_back();
      node = next;
    }
  }
  nodes_[node].value = value;
  first_bytes_[static_cast<unsigned char>(text.front())] = true;
}

std::optional<TokenTrie::Match> TokenTrie::longest_at(std::string_view text,
                                                      std::size_t position) const {
  std::optional<Match> best;
  std::uint32_t node = 0;
  for (std::size_t i = position; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    const auto& children = nodes_[node].children;
    const auto it = std::find_if(children.begin(), children.end(),
                                 [byte](const auto& child) { return child.first == byte; });
    if (it == children.end()) break;
    node = it->second;
    if (nodes_[node].value >= 0) best = Match{i + 1 - position, nodes_[node].value};
  }
  return best;
}

bool overlaps(std::span<const TextRange> ranges, std::size_t begin, std::size_t end) {
  return std::any_of(ranges.begin(), ranges.end(), [&](const TextRange& range) {
    return range.begin < end && begin < range.end;
  });
}

SpecialTextMatcher::SpecialTextMatcher(std::vector<std::pair<std::string, std::int32_t>> tokens) {
  for (const auto& [text, id] : tokens)
    trie_.insert(text, id);
}

}  // namespace quire::engine::detail
