// The prefill path of paged attention: calls of many tokens (a prompt chunk
// over its cached prefix). A block takes several consecutive tokens of one
// sequence times the query heads of a K/V group (64 rows up to head_dim 128,
// 32 beyond), so each key and value read from the pages serves every row of
// the block; the causal mask costs only the last tile of each block. The tile
// kernel itself is in attention_tile.cuh.

#include <cuda_runtime.h>

#include "attention_tile.cuh"
#include "kv_ops.h"

namespace quire::kernels::cuda {

void launch_attention_prefill(const AttentionCall& call, Stream stream) {
  attention::with_head_dim(call.pages.head_dim, [&](auto dim) {
    constexpr int kDim = decltype(dim)::value;
    constexpr int kRows = attention_rows(true, kDim);
    // A GPU with less shared memory per block than this tile needs (Turing
    // from head_dim 112, sm_86/89/120 at 256) takes the kernel with fewer
    // rows; the planner chose which (attention_rows_within).
    if constexpr (attention_has_small_prefill(kDim)) {
      if (call.shape.rows == kAttentionSmallPrefillRows) {
        attention::launch_tile_kernel<kDim, kAttentionSmallPrefillRows>(
            call, static_cast<cudaStream_t>(stream), "paged_attention (prefill, small tile)");
        return;
      }
    }
    attention::launch_tile_kernel<kDim, kRows>(call, static_cast<cudaStream_t>(stream),
                                               "paged_attention (prefill)");
  });
}

}  // namespace quire::kernels::cuda
