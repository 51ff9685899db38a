// How a paged_attention call is cut into thread blocks (kv_ops.h), and the
// launches in order: the decode or prefill kernel, then the merge of split
// parts when there are any.

#include <algorithm>
#include <cstdint>

#include "kv_ops.h"

namespace quire::kernels::cuda {
namespace {

// Most parts a key range is cut into: bounds the scratch and the merge.
constexpr int kMaxSplits = 64;
// A part covers at least this many keys (two tiles of the kernel).
constexpr std::int64_t kMinSplitKeys = 64;

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

}  // namespace

AttentionShape plan_attention_shape(std::int64_t tokens, int heads, int kv_heads, int head_dim,
                                    std::int64_t max_keys, int multiprocessors,
                                    std::size_t shared_limit) {
  AttentionShape shape;
  shape.prefill = tokens > kDecodeTokens;
  const int rows = std::max(attention_rows_within(shape.prefill, head_dim, shared_limit), 1);
  shape.rows = rows;
  const int group = heads / kv_heads;
  shape.head_chunk = std::min(group, rows);
  shape.head_chunks = static_cast<int>(ceil_div(group, shape.head_chunk));
  shape.tokens_per_block = shape.prefill ? rows / shape.head_chunk : 1;
  shape.row_blocks = ceil_div(tokens, shape.tokens_per_block);
  // Split the key range until there are about two blocks per multiprocessor.
  // Prefill: a part never shorter than kMinSplitKeys of the longest possible
  // range. Decode: max_keys is left out, so that the split, and with it the
  // order of the sums, depends on the real lengths alone (read on the device)
  // and not on how far page tables are padded: one CUDA graph serves every
  // length up to its padded max_pages with the results of the exact one.
  // Parts past a short sequence's keys find none and only cost the merge a
  // skipped term.
  const std::int64_t blocks = shape.row_blocks * shape.head_chunks * kv_heads;
  const std::int64_t wanted = 2 * std::int64_t{std::max(multiprocessors, 1)};
  if (blocks < wanted) {
    const std::int64_t longest = shape.prefill ? ceil_div(max_keys, kMinSplitKeys) : kMaxSplits;
    const std::int64_t splits =
        std::min<std::int64_t>({ceil_div(wanted, blocks), longest, kMaxSplits});
    shape.splits = static_cast<int>(std::max<std::int64_t>(splits, 1));
  }
  return shape;
}

std::size_t attention_scratch_floats(const AttentionShape& shape, std::int64_t tokens, int heads,
                                     int head_dim) {
  if (shape.splits <= 1) return 0;
  const auto parts = static_cast<std::size_t>(tokens) * static_cast<std::size_t>(heads) *
                     static_cast<std::size_t>(shape.splits);
  return parts * (static_cast<std::size_t>(head_dim) + 2);
}

void launch_paged_attention(const KvPagesArgs& pages, const BatchArgs& batch,
                            const AttentionArgs& args, const AttentionShape& shape, Stream stream) {
  if (batch.tokens <= 0) return;
  AttentionCall call{pages, batch, args, shape, nullptr, nullptr, nullptr};
  if (shape.splits > 1) {
    const auto parts = static_cast<std::size_t>(batch.tokens) *
                       static_cast<std::size_t>(args.heads) *
                       static_cast<std::size_t>(shape.splits);
    call.partial_values = args.scratch;
    call.partial_max = args.scratch + parts * static_cast<std::size_t>(pages.head_dim);
    call.partial_sum = call.partial_max + parts;
  }
  if (shape.prefill) {
    launch_attention_prefill(call, stream);
  } else {
    launch_attention_decode(call, stream);
  }
  if (shape.splits > 1) launch_attention_merge(call, stream);
}

}  // namespace quire::kernels::cuda
