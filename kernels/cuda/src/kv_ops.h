#pragma once

#include <cstddef>
#include <cstdint>

#include "quire/kernels/kv_layout.h"

// Launchers of the paged K/V kernels: write_kv (kv_write.cu) and paged
// attention (attention_decode.cu, attention_prefill.cu), with the CPU
// backend's semantics (kernels/cpu/backend/src/cpu_kv_pages.cpp,
// cpu_attention.cpp). CudaBackend checks the arguments first
// (cuda_backend_kv.cpp); all pointers are device pointers and the work is
// queued on `stream` (a cudaStream_t), so this header needs no CUDA and plain
// C++17 (device code) and C++20 (the backend) both include it.

namespace quire::kernels::cuda {

using Stream = void*;

// One of K or V of a layer: page p of the data starts at data + p *
// data_page_bytes, its scales at scales + p * scale_page_bytes.
struct KvPlaneArgs {
  std::uint8_t* data = nullptr;
  std::uint8_t* scales = nullptr;
  std::int64_t data_page_bytes = 0;
  std::int64_t scale_page_bytes = 0;
  KvCoding coding = KvCoding::Fp16;
  // FP8 with calibrated scales: kv_heads FP32 values in device memory; null:
  // each page's own (dynamic) scale.
  const float* calibrated = nullptr;
  // KvMirrors: FP16 mirror pages of the residual window, page p at mirror + p
  // * mirror_page_bytes, in the coding's stored domain; null: none.
  std::uint8_t* mirror = nullptr;
  std::int64_t mirror_page_bytes = 0;
};

struct KvPagesArgs {
  KvPlaneArgs key;
  KvPlaneArgs value;
  int page_size = 0;
  int kv_heads = 0;
  int head_dim = 0;
  int num_pages = 0;
  int mirror_slots = 0;  // KvMirrors::slot_count
};

// TokenBatch (backend.h), which device code cannot include (it needs C++20).
struct BatchArgs {
  const std::int32_t* token_sequence = nullptr;
  const std::int32_t* positions = nullptr;
  const std::int32_t* block_tables = nullptr;
  std::int64_t tokens = 0;
  int max_pages = 0;
  const std::int32_t* mirrored = nullptr;         // [sequences][2]: page-table index, slot
  const std::int32_t* visible_from = nullptr;     // TokenBatch::visible_from
  const std::int32_t* visible_through = nullptr;  // TokenBatch::visible_through
};

// Encodes key and value [tokens, kv_heads, head_dim] into their pages. A token
// whose position or page-table entry names no page is skipped (the CPU
// backend throws for it; a kernel cannot).
void launch_write_kv(const KvPagesArgs& pages, const BatchArgs& batch, const float* key,
                     const float* value, Stream stream);

// The residual window's FP16 mirrors (kv_mirror.cu): write_kv's second half,
// the batch's mirrored tokens written into their sequences' mirror slots; and
// fill_mirror, the first `tokens` tokens of `page` decoded into mirror `slot`.
void launch_write_mirrors(const KvPagesArgs& pages, const BatchArgs& batch, const float* key,
                          const float* value, Stream stream);
void launch_fill_mirror(const KvPagesArgs& pages, int page, int slot, int tokens, Stream stream);

// Head dimensions the attention kernels are compiled for: multiples of 16
// (K/V rows are read 16 bytes at a time) up to 256. Integer pages further
// need multiples of 32, as everywhere.
constexpr int kAttentionMaxHeadDim = 256;
constexpr bool attention_head_dim_supported(int head_dim) {
  return head_dim > 0 && head_dim % 16 == 0 && head_dim <= kAttentionMaxHeadDim;
}

// Calls of up to this many tokens take the decode kernel: one token per block,
// so a step that batches several sequences' decode tokens keeps them apart;
// longer calls are prefill chunks, whose tokens share each block's keys.
constexpr int kDecodeTokens = 64;

// Query rows (tokens times query heads of a group) of one block.
constexpr int attention_rows(bool prefill, int head_dim) {
  return !prefill ? 8 : head_dim <= 128 ? 64 : 32;
}

// Keys of one tile of the attention kernels: one key per lane when scoring.
constexpr int kAttentionTileKeys = 32;

// Shared memory of one attention block (attention_tile.cuh's Tile): the
// rows' queries, the tile's keys (rows padded by 4 floats), values, weights.
constexpr std::size_t attention_tile_bytes(int head_dim, int rows) {
  return sizeof(float) * (static_cast<std::size_t>(rows) * head_dim +
                          std::size_t{kAttentionTileKeys} * (head_dim + 4) +
                          std::size_t{kAttentionTileKeys} * head_dim +
                          static_cast<std::size_t>(rows) * kAttentionTileKeys);
}

// The least shared memory a block can ask for on the GPUs Quire builds for:
// 64 KiB on Turing (sm_75); 99 KiB on sm_86, sm_89 and sm_120; more on the
// data-centre parts. Prefill tiles larger than this have a second kernel
// with fewer rows, chosen where the GPU cannot hold the usual one.
constexpr std::size_t kAttentionSmallestSharedBytes = 64 * 1024;
constexpr int kAttentionSmallPrefillRows = 16;
constexpr bool attention_has_small_prefill(int head_dim) {
  return attention_tile_bytes(head_dim, attention_rows(true, head_dim)) >
         kAttentionSmallestSharedBytes;
}

// Rows per block for a call on a GPU whose blocks may have `shared_limit`
// bytes of shared memory; 0 when no attention kernel fits that GPU.
constexpr int attention_rows_within(bool prefill, int head_dim, std::size_t shared_limit) {
  const int usual = attention_rows(prefill, head_dim);
  if (attention_tile_bytes(head_dim, usual) <= shared_limit) return usual;
  if (prefill && attention_has_small_prefill(head_dim) &&
      attention_tile_bytes(head_dim, kAttentionSmallPrefillRows) <= shared_limit) {
    return kAttentionSmallPrefillRows;
  }
  return 0;
}

// How one paged_attention call is cut into thread blocks. A block takes a
// set of query rows (tokens times query heads of one K/V head) and one part
// of their key range; blockIdx.x = row block * head_chunks + chunk,
// blockIdx.y = K/V head, blockIdx.z = split.
struct AttentionShape {
  bool prefill = false;  // which kernel: decode (one token a block) or prefill
  int rows = 0;          // query rows of a block (attention_rows_within)
  int tokens_per_block = 1;
  int head_chunk = 1;   // query heads of a group per block
  int head_chunks = 1;  // blocks per group
  std::int64_t row_blocks = 0;
  int splits = 1;  // parts of each key range; more than one: partials and a merge
};

// Picks the kernel and the split for a call: the decode kernel for up to
// kDecodeTokens tokens (one block per token, every query head of a K/V group
// on each loaded key), the prefill kernel beyond; the key range is split until
// the grid fills `multiprocessors` about twice over. Only prefill's split
// depends on `max_keys` (a decode call's results must not depend on how far
// its page table is padded).
// `shared_limit`: the shared memory a block may use on the GPU; the caller
// checks attention_rows_within first (rows 0: nothing fits).
AttentionShape plan_attention_shape(std::int64_t tokens, int heads, int kv_heads, int head_dim,
                                    std::int64_t max_keys, int multiprocessors,
                                    std::size_t shared_limit);

// Floats of split scratch a call of this shape needs (0 without splits).
std::size_t attention_scratch_floats(const AttentionShape& shape, std::int64_t tokens, int heads,
                                     int head_dim);

struct AttentionArgs {
  const float* query = nullptr;  // [tokens, heads, head_dim]
  float* out = nullptr;          // [tokens, heads, head_dim]
  int heads = 0;
  int group = 0;  // query heads per K/V head
  float scale = 0.0f;
  int sliding_window = 0;
  float softcap = 0.0f;      // scores become softcap * tanh(score / softcap); 0: none
  float* scratch = nullptr;  // attention_scratch_floats(...) floats
};

// Everything one launch needs, passed to the kernels by value.
struct AttentionCall {
  KvPagesArgs pages;
  BatchArgs batch;
  AttentionArgs args;
  AttentionShape shape;
  // Split partials, per (token, head, split): the unnormalized sum of values
  // in the stored domain, the maximum score and the sum of weights.
  float* partial_values = nullptr;
  float* partial_max = nullptr;
  float* partial_sum = nullptr;
};

void launch_paged_attention(const KvPagesArgs& pages, const BatchArgs& batch,
                            const AttentionArgs& args, const AttentionShape& shape, Stream stream);

// The two kernels and the merge of split partials, for launch_paged_attention.
void launch_attention_decode(const AttentionCall& call, Stream stream);
void launch_attention_prefill(const AttentionCall& call, Stream stream);
void launch_attention_merge(const AttentionCall& call, Stream stream);

}  // namespace quire::kernels::cuda
