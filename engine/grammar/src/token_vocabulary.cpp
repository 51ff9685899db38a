#include "quire/engine/grammar/token_vocabulary.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "quire/engine/tokenizer/tokenizer.h"

namespace quire::engine::grammar {

namespace {

// Sorted byte strings give the trie in depth-first order: a token's nodes
// follow the longest prefix it shares with the one before.
VocabularyTrie build_trie(const std::vector<std::string>& bytes, std::vector<std::uint32_t> ids) {
  std::stable_sort(ids.begin(), ids.end(),
                   [&](std::uint32_t x, std::uint32_t y) { return bytes[x] < bytes[y]; });
  VocabularyTrie trie;
  std::vector<std::uint32_t> path;  // node index at each depth - 1
  std::string_view previous;
  auto close_to = [&](std::size_t depth) {
    while (path.size() > depth) {
      trie.nodes[path.back()].subtree_end = static_cast<std::uint32_t>(trie.nodes.size());
      path.pop_back();
    }
  };
  for (const std::uint32_t id : ids) {
    const std::string_view text = bytes[id];
    const auto shared = static_cast<std::size_t>(
        std::mismatch(text.begin(), text.end(), previous.begin(), previous.end()).first -
        text.begin());
    close_to(shared);
    for (std::size_t depth = shared; depth < text.size(); ++depth) {
      TrieNode node;
      node.byte = static_cast<std::uint8_t>(text[depth]);
      node.depth = static_cast<std::uint16_t>(depth + 1);
      path.push_back(static_cast<std::uint32_t>(trie.nodes.size()));
      trie.nodes.push_back(node);
    }
    TrieNode& end = trie.nodes[path.back()];
    if (end.token_count == 0) end.first_token = static_cast<std::uint32_t>(trie.tokens.size());
    ++end.token_count;
    trie.tokens.push_back(id);
    trie.max_depth = std::max(trie.max_depth, text.size());
    previous = text;
  }
  close_to(0);
  return trie;
}

// Characters of plain string content in `text`: whole UTF-8 characters
// from U+0020 on, other than '"' and '\'; -1 when it is not plain.
int plain_characters(std::string_view text) {
  int count = 0;
  for (std::size_t i = 0; i < text.size(); ++count) {
    const auto lead = static_cast<unsigned char>(text[i]);
    if (lead < 0x80) {
      if (lead < 0x20 || lead == '"' || lead == '\\') return -1;
      ++i;
      continue;
    }
    // Well-formed sequences only, as JsonText::multibyte_character takes them.
    std::size_t length = 0;
    unsigned char second_low = 0x80, second_high = 0xBF;
    if (lead >= 0xC2 && lead <= 0xDF) {
      length = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      length = 3;
      if (lead == 0xE0) second_low = 0xA0;
      if (lead == 0xED) second_high = 0x9F;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      length = 4;
      if (lead == 0xF0) second_low = 0x90;
      if (lead == 0xF4) second_high = 0x8F;
    } else {
      return -1;
    }
    if (i + length > text.size()) return -1;
    for (std::size_t k = 1; k < length; ++k) {
      const auto c = static_cast<unsigned char>(text[i + k]);
      const unsigned char low = k == 1 ? second_low : 0x80;
      const unsigned char high = k == 1 ? second_high : 0xBF;
      if (c < low || c > high) return -1;
    }
    i += length;
  }
  return count;
}

}  // namespace

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
  std::vector<std::uint32_t> all;
  std::vector<std::uint32_t> structural;
  plain_masks_.assign(mask_words() * (kMaxPlainCharacters + 1), 0u);
  for (std::size_t id = 0; id < bytes_.size(); ++id) {
    const std::string& bytes = bytes_[id];
    if (bytes.empty() || bytes.size() > 0xFFFF || is_eos(static_cast<std::int32_t>(id))) continue;
    all.push_back(static_cast<std::uint32_t>(id));
    const int characters = plain_characters(bytes);
    if (characters < 0 || characters > kMaxPlainCharacters) {
      structural.push_back(static_cast<std::uint32_t>(id));
      continue;
    }
    longest_plain_token_ = std::max(longest_plain_token_, characters);
    for (int limit = characters; limit <= kMaxPlainCharacters; ++limit) {
      plain_masks_[static_cast<std::size_t>(limit) * mask_words() + id / 32] |= 1u << (id % 32);
    }
  }
  trie_ = build_trie(bytes_, std::move(all));
  structural_trie_ = build_trie(bytes_, std::move(structural));
}

std::span<const std::uint32_t> TokenVocabulary::plain_mask(int characters) const {
  const auto index = static_cast<std::size_t>(std::clamp(characters, 0, kMaxPlainCharacters));
  return std::span(plain_masks_).subspan(index * mask_words(), mask_words());
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
