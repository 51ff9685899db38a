#include "quire/engine/grammar/token_vocabulary.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "quire/engine/tokenizer/tokenizer.h"

namespace quire::engine::grammar {

TokenVocabulary::TokenVocabulary(std::vector<std::string> token_bytes,
                                 std::vector<std::int32_t> eos)
    : bytes_(std::move(token_bytes)), eos_(std::move(eos)) {
  for (const std::int32_t id : eos_) {
    if (id < 0 || id >= size()) {
      throw std::invalid_argument("end-of-sequence id " + std::to_string(id) +
                                  " is outside the vocabulary of " + std::to_string(size()) +
                                  " tokens");
    }
  }
  // Sorted byte strings give the trie in depth-first order: a token's nodes
  // follow the longest prefix it shares with the one before.
  std::vector<std::uint32_t> order;
  for (std::size_t id = 0; id < bytes_.size(); ++id) {
    const std::string& bytes = bytes_[id];
    if (!bytes.empty() && bytes.size() <= 0xFFFF && !is_eos(static_cast<std::int32_t>(id)))
      order.push_back(static_cast<std::uint32_t>(id));
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](std::uint32_t x, std::uint32_t y) { return bytes_[x] < bytes_[y]; });
  std::vector<std::uint32_t> path;  // node index at each depth - 1
  std::string_view previous;
  auto close_to = [&](std::size_t depth) {
    while (path.size() > depth) {
      trie_[path.back()].subtree_end = static_cast<std::uint32_t>(trie_.size());
      path.pop_back();
    }
  };
  for (const std::uint32_t id : order) {
    const std::string_view bytes = bytes_[id];
    const std::size_t shared = static_cast<std::size_t>(
        std::mismatch(bytes.begin(), bytes.end(), previous.begin(), previous.end()).first -
        bytes.begin());
    close_to(shared);
    for (std::size_t depth = shared; depth < bytes.size(); ++depth) {
      TrieNode node;
      node.byte = static_cast<std::uint8_t>(bytes[depth]);
      node.depth = static_cast<std::uint16_t>(depth + 1);
      path.push_back(static_cast<std::uint32_t>(trie_.size()));
      trie_.push_back(node);
    }
    TrieNode& end = trie_[path.back()];
    if (end.token_count == 0) end.first_token = static_cast<std::uint32_t>(trie_tokens_.size());
    ++end.token_count;
    trie_tokens_.push_back(id);
    max_depth_ = std::max(max_depth_, bytes.size());
    previous = bytes;
  }
  close_to(0);
}

std::shared_ptr<const TokenVocabulary> TokenVocabulary::from_tokenizer(const Tokenizer& tokenizer) {
  std::vector<std::string> bytes(static_cast<std::size_t>(tokenizer.vocab_size()));
  for (std::size_t id = 0; id < bytes.size(); ++id)
    bytes[id] = tokenizer.token_bytes(static_cast<std::int32_t>(id));
  return std::make_shared<const TokenVocabulary>(std::move(bytes), tokenizer.eos());
}

bool TokenVocabulary::is_eos(std::int32_t id) const {
  return std::find(eos_.begin(), eos_.end(), id) != eos_.end();
}

}  // namespace quire::engine::grammar
