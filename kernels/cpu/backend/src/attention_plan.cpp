#include "attention_plan.h"

#include <algorithm>

namespace quire::kernels::cpu_attention {
namespace {

// Parts of a key range of `blocks` key blocks when `base` items (blocks times
// K/V heads) would leave threads idle: enough for about four items a thread,
// none shorter than kMinSplitBlocks.
int split_count(std::int64_t base, int threads, std::int64_t blocks) {
  if (threads <= 1 || base >= 2 * std::int64_t{threads}) return 1;
  const std::int64_t wanted = (4 * std::int64_t{threads} + base - 1) / base;
  return static_cast<int>(std::max<std::int64_t>(1, std::min(wanted, blocks / kMinSplitBlocks)));
}

}  // namespace

AttentionPlan plan_attention(const TokenBatch& batch, int kv_heads, int group, int sliding_window,
                             int threads) {
  AttentionPlan plan;
  plan.first.resize(static_cast<std::size_t>(batch.tokens));
  for (std::int64_t t = 0; t < batch.tokens; ++t) {
    const std::int32_t position = batch.positions[t];
    plan.first[std::size_t(t)] = first_visible_position(batch, t, sliding_window);
    if (position < 0) {
      plan.idle.push_back(t);
    } else {
      plan.order.push_back(t);
    }
  }
  std::stable_sort(plan.order.begin(), plan.order.end(), [&](std::int64_t a, std::int64_t b) {
    if (batch.token_sequence[a] != batch.token_sequence[b]) {
      return batch.token_sequence[a] < batch.token_sequence[b];
    }
    return batch.positions[a] < batch.positions[b];
  });

  // A token joins the open block if it is of the same sequence, the block has
  // room, and its keys overlap or touch the block's: its first key is at most
  // one past the block's last (first keys grow with positions, so the union
  // stays one range).
  const std::int64_t block_tokens = std::max(1, kMaxRows / group);
  for (std::int64_t i = 0; i < std::int64_t(plan.order.size()); ++i) {
    const std::int64_t t = plan.order[std::size_t(i)];
    const std::int32_t sequence = batch.token_sequence[t];
    const std::int32_t first = plan.first[std::size_t(t)];
    if (!plan.blocks.empty()) {
      QueryBlock& open = plan.blocks.back();
      if (open.sequence == sequence && open.end - open.begin < block_tokens &&
          first <= open.last_key + 1) {
        // A both-ways block's rows may see back further than earlier rows.
        open.first_key = std::min(open.first_key, first);
        open.last_key = std::max(open.last_key, last_visible_position(batch, t));
        open.end = i + 1;
        continue;
      }
    }
    plan.blocks.push_back(QueryBlock{sequence, first, last_visible_position(batch, t), i, i + 1});
  }

  const std::int64_t base = std::int64_t(plan.blocks.size()) * kv_heads;
  for (int b = 0; b < int(plan.blocks.size()); ++b) {
    QueryBlock& block = plan.blocks[std::size_t(b)];
    const std::int32_t first_block = block.first_key / kKeyBlock;
    const std::int32_t key_blocks = block.last_key / kKeyBlock - first_block + 1;
    block.splits = split_count(base, threads, key_blocks);
    block.first_item = std::int64_t(plan.items.size());
    const std::int64_t rows = (block.end - block.begin) * group;
    for (int h = 0; h < kv_heads; ++h) {
      for (int part = 0; part < block.splits; ++part) {
        // Parts end at key block boundaries.
        const std::int64_t begin = first_block + std::int64_t{key_blocks} * part / block.splits;
        const std::int64_t end = first_block + std::int64_t{key_blocks} * (part + 1) / block.splits;
        AttentionItem item{
            b, h,
            static_cast<std::int32_t>(std::max<std::int64_t>(block.first_key, begin * kKeyBlock)),
            static_cast<std::int32_t>(std::min<std::int64_t>(block.last_key, end * kKeyBlock - 1))};
        if (block.splits > 1) {
          item.partial_row = plan.partial_rows;
          plan.partial_rows += rows;
        }
        plan.items.push_back(item);
      }
    }
  }
  return plan;
}

}  // namespace quire::kernels::cpu_attention
