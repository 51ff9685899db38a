#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "../token_trie.h"
#include "json_field.h"
#include "normalizers.h"

namespace quire::engine::detail {

// One entry of tokenizer.json's "added_tokens".
struct AddedToken {
  std::int32_t id = 0;
  std::string content;
  bool special = false;
  bool single_word = false;  // only where no word character touches it
  bool lstrip = false;       // takes the whitespace on its left
  bool rstrip = false;       // takes the whitespace on its right
  bool normalized = false;   // matched in the normalized text
};

// A stretch of text on its way to the model, or an added token found in it.
struct Segment {
  std::string text;
  std::int32_t id = -1;   // the added token's id, or -1 for text to tokenize
  bool at_start = false;  // begins where the whole input begins
};

// Finds added tokens in text as Hugging Face's AddedVocabulary does:
// leftmost-longest, first the tokens matched in the raw text, then, in the
// normalized text between them, those marked "normalized". Special tokens are
// found only when asked for and outside the literal ranges.
class AddedVocabulary {
 public:
  AddedVocabulary() = default;
  // Reads the list; `normalizer` (may be null) gives normalized tokens the
  // form they are matched in. Ids above `max_id` are refused, so that a lying
  // file cannot make the id tables huge.
  AddedVocabulary(const JsonField& list, const Normalizer* normalizer, std::int32_t max_id);

  // Splits `text` (valid UTF-8), normalizing the text between tokens.
  std::vector<Segment> split(std::string_view text, const Normalizer* normalizer,
                             bool parse_special, std::span<const TextRange> literal) const;

  const std::vector<AddedToken>& tokens() const { return tokens_; }
  const AddedToken* by_id(std::int32_t id) const;
  const AddedToken* by_content(std::string_view content) const;
  int max_id() const { return max_id_; }

 private:
  struct Found {
    std::size_t begin;
    std::size_t end;
    std::int32_t id;
  };
  std::vector<Found> find(std::string_view text, const TokenTrie& trie, bool parse_special,
                          std::span<const TextRange> literal, std::size_t literal_offset) const;

  std::vector<AddedToken> tokens_;
  std::vector<std::int32_t> index_by_id_;  // id -> index into tokens_, or -1
  TokenTrie raw_;
  TokenTrie normalized_;
  int max_id_ = -1;
};

}  // namespace quire::engine::detail
