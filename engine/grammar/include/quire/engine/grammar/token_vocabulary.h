#pragma once

#include <cstdint>
#include <memory>
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
  std::uint32_t first_token = 0;  // into TokenVocabulary::trie_tokens()
  std::uint16_t token_count = 0;
  std::uint16_t depth = 0;
  std::uint8_t byte = 0;
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

  const std::vector<TrieNode>& trie() const { return trie_; }
  const std::vector<std::uint32_t>& trie_tokens() const { return trie_tokens_; }
  std::size_t max_depth() const { return max_depth_; }

 private:
  std::vector<std::string> bytes_;
  std::vector<std::int32_t> eos_;
  std::vector<TrieNode> trie_;
  std::vector<std::uint32_t> trie_tokens_;
  std::size_t max_depth_ = 0;
};

}  // namespace quire::engine::grammar
