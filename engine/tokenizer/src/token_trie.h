#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "quire/engine/tokenizer/tokenizer.h"

namespace quire::engine::detail {

// A byte trie over token texts, for finding special and added tokens in text
// leftmost-longest, the way Hugging Face's added vocabulary matches them.
class TokenTrie {
 public:
  struct Match {
    std::size_t length = 0;
    std::int32_t value = -1;
  };

  // A later insert of the same text replaces the value.
  void insert(std::string_view text, std::int32_t value);
  bool empty() const { return nodes_.size() <= 1; }
  // The longest entry that starts at `position`.
  std::optional<Match> longest_at(std::string_view text, std::size_t position) const;
  // Whether any entry starts with this byte; lets a scan skip most positions.
  bool may_start(unsigned char byte) const { return first_bytes_[byte]; }

 private:
  struct Node {
    std::vector<std::pair<unsigned char, std::uint32_t>> children;
    std::int32_t value = -1;
  };
  std::vector<Node> nodes_{Node{}};
  std::array<bool, 256> first_bytes_{};
};

// Whether [begin, end) overlaps one of the ranges.
bool overlaps(std::span<const TextRange> ranges, std::size_t begin, std::size_t end);

// Finds special tokens spelled in text, outside the given literal ranges,
// leftmost-longest.
class SpecialTextMatcher {
 public:
  SpecialTextMatcher() = default;
  explicit SpecialTextMatcher(std::vector<std::pair<std::string, std::int32_t>> tokens);

  // Calls emit(plain, id) for each special token found, with the plain text
  // before it, and finally emit(rest, -1).
  template <typename Emit>
  void split(std::string_view text, std::span<const TextRange> literal, Emit&& emit) const {
    std::size_t plain_begin = 0;
    std::size_t position = 0;
    while (position < text.size()) {
      const auto byte = static_cast<unsigned char>(text[position]);
      if (trie_.may_start(byte)) {
        const auto match = trie_.longest_at(text, position);
        if (match && !overlaps(literal, position, position + match->length)) {
          emit(text.substr(plain_begin, position - plain_begin), match->value);
          position += match->length;
          plain_begin = position;
          continue;
        }
      }
      ++position;
    }
    emit(text.substr(plain_begin), -1);
  }

 private:
  TokenTrie trie_;
};

}  // namespace quire::engine::detail
