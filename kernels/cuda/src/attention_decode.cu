// The decode path of paged attention: calls of a few tokens (a decode step,
// one token per sequence), one block per token and K/V head, so every query
// head of the group shares each key and value the block reads. With few
// blocks the key range is split (flash decoding): each part writes partial
// sums, and the merge kernel below combines them into the output. The tile
// kernel itself is in attention_tile.cuh.

#include <cuda_runtime.h>

#include "attention_tile.cuh"
#include "cache_quant.cuh"
#include "kv_ops.h"
#include "quire/kernels/cuda/cuda_error.h"

namespace quire::kernels::cuda {
namespace {

constexpr int kMergeThreads = 128;
constexpr int kMergeRowsPerBlock = kMergeThreads / 32;

// One warp per (token, head): the parts' sums rescaled to the largest of
// their maxima, normalized, and rotated back from integer value pages.
__global__ void __launch_bounds__(kMergeThreads) merge_kernel(const AttentionCall call) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  const std::int64_t row = blockIdx.x * std::int64_t{kMergeRowsPerBlock} + threadIdx.x / 32;
  if (row >= call.batch.tokens * call.args.heads) return;  // the whole warp leaves together
  const int splits = call.shape.splits;
  const int dim = call.pages.head_dim;
  const std::int64_t first = row * splits;
  const float none = attention::minus_infinity();

  float maximum = none;
  for (int s = 0; s < splits; ++s)
    maximum = fmaxf(maximum, call.partial_max[first + s]);
  float total = 0.0f;
  for (int s = 0; s < splits; ++s) {
    const float part_max = call.partial_max[first + s];
    if (part_max != none) total += call.partial_sum[first + s] * expf(part_max - maximum);
  }
  // A token without keys (negative position) has no part with any: zeros.
  const float inverse = total > 0.0f ? 1.0f / total : 0.0f;
  const bool rotated = attention::is_integer(call.pages.value.coding);
  for (int c = 0; c * 32 < dim; ++c) {
    const int column = c * 32 + lane;  // past dim on some lanes when dim % 32 == 16
    float sum = 0.0f;
    for (int s = 0; s < splits && column < dim; ++s) {
      const float part_max = call.partial_max[first + s];
      if (part_max == none) continue;
      sum += call.partial_values[(first + s) * dim + column] * expf(part_max - maximum);
    }
    // Integer value pages have dim % 32 == 0: every lane takes part.
    if (rotated) sum = cache_codec::hadamard32_warp(sum, lane);
    if (column < dim) call.args.out[row * dim + column] = sum * inverse;
  }
}

}  // namespace

void launch_attention_decode(const AttentionCall& call, Stream stream) {
  attention::with_head_dim(call.pages.head_dim, [&](auto dim) {
    constexpr int kDim = decltype(dim)::value;
    attention::launch_tile_kernel<kDim, attention_rows(false, kDim)>(
        call, static_cast<cudaStream_t>(stream), "paged_attention (decode)");
  });
}

void launch_attention_merge(const AttentionCall& call, Stream stream) {
  const std::int64_t rows = call.batch.tokens * call.args.heads;
  const auto blocks = static_cast<unsigned>((rows + kMergeRowsPerBlock - 1) / kMergeRowsPerBlock);
  merge_kernel<<<blocks, kMergeThreads, 0, static_cast<cudaStream_t>(stream)>>>(call);
  check(cudaGetLastError(), "paged_attention (merge of split parts)");
}

}  // namespace quire::kernels::cuda
