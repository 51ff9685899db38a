#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "json_field.h"
#include "merge_table.h"

namespace quire::engine::detail {

// Lookups by string_view into maps keyed by std::string, without copies.
struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view text) const {
    return std::hash<std::string_view>{}(text);
  }
};
using StringIds = std::unordered_map<std::string, std::int32_t, StringHash, std::equal_to<>>;

// The BPE model of a tokenizer.json: a vocabulary, merges ranked by their
// order in the file, and what becomes of characters the vocabulary lacks
// (byte pieces "<0x41>" with byte_fallback, else the unknown token). Both the
// byte-level files of GPT-2, Llama 3 and Qwen and the SentencePiece-style
// files of Llama 2, Mistral and Gemma use it.
class BpeModel {
 public:
  // `extra_ids`: how many ids the added tokens may add beyond the
  // vocabulary; ids are bounded by it so that a lying file cannot make the
  // loader allocate without limit. Throws ModelError.
  static std::unique_ptr<BpeModel> read(const JsonField& config, std::size_t extra_ids);

  // Appends the ids of one pre-tokenized word. Safe from several threads.
  void tokenize(std::string_view word, std::vector<std::int32_t>& out) const;

  std::optional<std::int32_t> find(std::string_view token) const;
  // nullptr for an id no vocabulary entry has.
  const std::string* token(std::int32_t id) const;
  int size() const { return static_cast<int>(tokens_.size()); }  // highest id + 1
  std::size_t entries() const { return vocab_.size(); }
  std::optional<std::int32_t> unknown() const { return unknown_; }
  bool byte_fallback() const { return byte_fallback_; }

 private:
  void tokenize_cached(std::string_view word, std::vector<std::int32_t>& out) const;
  void merge_word(std::string_view word, std::vector<std::int32_t>& out) const;
  void plan_metaspace_cuts(const std::vector<std::pair<std::int32_t, std::int32_t>>& merges);
  bool may_cut_before(std::string_view word, std::size_t position) const;

  StringIds vocab_;
  std::vector<std::string> tokens_;  // by id; empty where no entry
  std::vector<bool> present_;
  MergeTable merges_;
  std::string continuing_subword_prefix_;
  std::string end_of_word_suffix_;
  std::optional<std::int32_t> unknown_;
  bool fuse_unknown_ = false;
  bool byte_fallback_ = false;
  bool ignore_merges_ = false;
  std::array<std::int32_t, 256> byte_ids_{};  // -1 where the vocabulary lacks the piece

  // SentencePiece-style files have no pre-tokenizer, so a whole text between
  // added tokens is one word: too long for the cache, and slow to merge in
  // one piece. Where no merge can join a symbol that ends in another
  // character to one that starts with "▁", a word is cut before each such
  // "▁" and the parts are merged (and cached) alone, which gives the same
  // ids. `metaspace_joins_` lists the characters some merge does join to a
  // following "▁..." token (Gemma 3 has ">" + "▁</"); no cut is made after them.
  bool cut_before_metaspace_ = false;
  std::vector<char32_t> metaspace_joins_;

  // Words seen before, bounded; cleared when full so that it follows the text.
  static constexpr std::size_t kCacheCapacity = 16384;
  static constexpr std::size_t kCacheableWord = 256;  // bytes
  mutable std::shared_mutex cache_mutex_;
  mutable std::unordered_map<std::string, std::vector<std::int32_t>, StringHash, std::equal_to<>>
      cache_;
};

}  // namespace quire::engine::detail
