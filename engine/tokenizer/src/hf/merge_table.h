#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace quire::engine::detail {

// The merges of a BPE model by their pair of token ids: an open-addressing
// table probed linearly. Merging looks a pair up for every pair of
// neighbouring symbols, so on text the word cache does not know this lookup
// dominates; std::unordered_map's buckets of nodes cost a cache miss or two
// more per lookup than one flat array of entries.
class MergeTable {
 public:
  struct Merge {
    std::int32_t rank = 0;
    std::int32_t id = 0;  // the token the pair becomes
  };

  void reserve(std::size_t count);
  // A pair inserted again takes the new merge.
  void insert(std::int32_t left, std::int32_t right, Merge merge);
  const Merge* find(std::int32_t left, std::int32_t right) const {
    if (entries_.empty()) return nullptr;
    const std::uint64_t key = pair_key(left, right);
    for (std::size_t slot = slot_of(key);; slot = (slot + 1) & mask_) {
      const Entry& entry = entries_[slot];
      if (entry.key == key) return &entry.merge;
      if (entry.key == kEmpty) return nullptr;
    }
  }

 private:
  struct Entry {
    std::uint64_t key;
    Merge merge;
  };
  // Ids are never negative, so no pair has this key.
  static constexpr std::uint64_t kEmpty = ~std::uint64_t{0};
  static std::uint64_t pair_key(std::int32_t left, std::int32_t right) {
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(left)) << 32) |
           static_cast<std::uint32_t>(right);
  }
  std::size_t slot_of(std::uint64_t key) const {
    return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> shift_);
  }
  void grow();

  std::vector<Entry> entries_;
  std::size_t count_ = 0;
  std::size_t mask_ = 0;
  int shift_ = 64;
};

}  // namespace quire::engine::detail
