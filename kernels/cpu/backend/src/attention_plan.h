#pragma once

// Private to the CPU backend: how one paged_attention call is cut into work.
//
// The tokens of a batch are grouped by sequence and ordered by position into
// query blocks. A block's tokens attend to one contiguous range of keys, so the
// range is decoded once per K/V head and used by every query head of the group
// and every token of the block. A work item is one block and one K/V head,
// or, when those are too few to occupy the threads (a decode step of one
// sequence), one part of the block's key range; the parts' partial sums are
// merged afterwards (split-K, as in flash decoding).

#include <cstdint>
#include <vector>

#include "quire/kernels/backend.h"

namespace quire::kernels::cpu_attention {

// Keys are decoded and scored in blocks at multiples of this position.
inline constexpr int kKeyBlock = 64;
// Query rows (tokens times heads of a group) of one item; bounds the scratch.
inline constexpr int kMaxRows = 128;
// A part of a split key range covers at least this many key blocks.
inline constexpr int kMinSplitBlocks = 4;

struct QueryBlock {
  std::int32_t sequence = 0;
  std::int32_t first_key = 0;  // the union of its tokens' key ranges
  std::int32_t last_key = 0;
  std::int64_t begin = 0;  // its tokens: AttentionPlan::order[begin, end)
  std::int64_t end = 0;
  int splits = 1;               // parts of the key range, each its own item per K/V head
  std::int64_t first_item = 0;  // items [first_item, first_item + kv_heads * splits)
};

struct AttentionItem {
  int block = 0;
  int kv_head = 0;
  std::int32_t first_key = 0;  // the part of the block's range this item covers
  std::int32_t last_key = 0;
  // Split items: the first of its rows in the partial-sum buffers; -1 when
  // the item writes the attention output itself.
  std::int64_t partial_row = -1;
};

struct AttentionPlan {
  std::vector<std::int64_t> order;  // batch tokens by (sequence, position)
  std::vector<std::int32_t> first;  // per batch token: its first key (window)
  std::vector<QueryBlock> blocks;
  std::vector<AttentionItem> items;  // by block, then K/V head, then part
  std::int64_t partial_rows = 0;     // rows of the partial-sum buffers
  std::vector<std::int64_t> idle;    // batch tokens with no key at all (negative position)
};

// `threads`: how many threads will run the items.
AttentionPlan plan_attention(const TokenBatch& batch, int kv_heads, int group, int sliding_window,
                             int threads);

}  // namespace quire::kernels::cpu_attention
