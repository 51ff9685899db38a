#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace quire::engine {
class Tokenizer;
}

namespace quire::engine::grammar {

// One node of the vocabulary trie, stored in depth-first order: the node's
// byte, its depth (1 for a token's first byte), where its subtree ends (the
// index to jump to when the grammar rejects the byte), and the token ids
// whose bytes end here.
struct TrieNode {
  std::uint32_t subtree_end = 0;
  std::uint32_t first_token = 0;  // into VocabularyTrie::tokens
  std::uint16_t token_count = 0;
  std::uint16_t depth = 0;
  std::uint8_t byte = 0;
};

// A trie over some of the vocabulary's tokens, in depth-first order.
struct VocabularyTrie {
  std::vector<TrieNode> nodes;
  std::vector<std::uint32_t> tokens;  // ids, by TrieNode::first_token
  std::size_t max_depth = 0;
};

// A tokenizer's vocabulary as byte strings, with a trie over them, built
// once per model and shared (immutable, thread-safe) by every matcher. Ids
// with no bytes (control tokens, unused ids) are never allowed by a grammar;
// the end-of-sequence ids are allowed exactly where the grammar's text may
// end.
class TokenVocabulary {
 public:
  // `token_bytes[id]`: what token `id` adds to the text (see
  // Tokenizer::token_bytes); `eos`: the ids that end a reply.
  TokenVocabulary(std::vector<std::string> token_bytes, std::vector<std::int32_t> eos);
  static std::shared_ptr<const TokenVocabulary> from_tokenizer(const Tokenizer& tokenizer);

  int size() const { return static_cast<int>(bytes_.size()); }
  // 32-bit words in a mask over the vocabulary: bit (id % 32) of word id / 32.
  std::size_t mask_words() const { return (bytes_.size() + 31) / 32; }
  const std::string& bytes(std::int32_t id) const { return bytes_[static_cast<std::size_t>(id)]; }
  const std::vector<std::int32_t>& eos() const { return eos_; }
  bool is_eos(std::int32_t id) const;

  // Every token with bytes, end-of-sequence ids aside.
  const VocabularyTrie& trie() const { return trie_; }

  // Most tokens are plain string content: whole UTF-8 characters, none of
  // them '"', '\' or a control. Inside a JSON string they are allowed or not
  // by their length alone, so a matcher takes them from a precomputed mask
  // and walks only the trie of the other tokens (LLGuidance's "slicer").
  static constexpr int kMaxPlainCharacters = 64;
  // The plain tokens of at most `characters` characters (up to
  // kMaxPlainCharacters), as a mask of mask_words() words.
  std::span<const std::uint32_t> plain_mask(int characters) const;
  // Characters of the longest plain token: how far a matcher needs to look
  // along a string.
  int longest_plain_token() const { return longest_plain_token_; }
  // Every token with bytes that is not plain.
  const VocabularyTrie& structural_trie() const { return structural_trie_; }

 private:
  std::vector<std::string> bytes_;
  std::vector<std::int32_t> eos_;
  VocabularyTrie trie_;
  VocabularyTrie structural_trie_;
  std::vector<std::uint32_t> plain_masks_;  // kMaxPlainCharacters + 1 masks
  int longest_plain_token_ = 0;
};

}  // namespace quire::engine::grammar
