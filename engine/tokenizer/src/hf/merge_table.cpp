#include "merge_table.h"

namespace quire::engine::detail {

void MergeTable::reserve(std::size_t count) {
  // At most half full, so that probes stay short.
  std::size_t capacity = 16;
  int bits = 4;
  while (capacity < 2 * count) {
    capacity *= 2;
    ++bits;
  }
  if (capacity <= entries_.size()) return;
  std::vector<Entry> old = std::move(entries_);
  entries_.assign(capacity, Entry{kEmpty, {}});
  mask_ = capacity - 1;
  shift_ = 64 - bits;
  count_ = 0;
  for (const Entry& entry : old) {
    if (entry.key != kEmpty) {
      insert(static_cast<std::int32_t>(entry.key >> 32),
             static_cast<std::int32_t>(entry.key & 0xFFFFFFFFu), entry.merge);
    }
  }
}

void MergeTable::insert(std::int32_t left, std::int32_t right, Merge merge) {
  if (2 * (count_ + 1) > entries_.size()) reserve(count_ + 1 > 8 ? 2 * (count_ + 1) : 8);
  const std::uint64_t key = pair_key(left, right);
  for (std::size_t slot = slot_of(key);; slot = (slot + 1) & mask_) {
    Entry& entry = entries_[slot];
    if (entry.key == key) {
      entry.merge = merge;
      return;
    }
    if (entry.key == kEmpty) {
      entry = {key, merge};
      ++count_;
      return;
    }
  }
}

}  // namespace quire::engine::detail
