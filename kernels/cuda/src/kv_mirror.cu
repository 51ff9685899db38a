// The residual window's FP16 mirrors (KvMirrors in kv_layout.h), as the CPU
// backend keeps them (kernels/cpu/backend/src/cpu_kv_pages.cpp): a mirror
// holds FP16 head vectors in the half's stored domain, so integer codings'
// groups are Hadamard-rotated first (one warp per 32-element group, the same
// butterflies and rounding as their pages), other codings' elements are
// converted one thread each.

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "cache_quant.cuh"
#include "kv_device.cuh"
#include "kv_ops.h"
#include "quire/kernels/cuda/cuda_error.h"

namespace quire::kernels::cuda {
namespace {

constexpr int kThreads = 256;

unsigned blocks_for(std::int64_t threads) {
  return static_cast<unsigned>((threads + kThreads - 1) / kThreads);
}

bool is_integer(KvCoding coding) {
  return coding == KvCoding::Int8 || coding == KvCoding::Int4;
}

// The mirror slot of token `token`'s position, or -1 where its sequence
// mirrors another page (or none).
__device__ int mirror_slot_of(const KvPagesArgs& pages, const BatchArgs& batch, std::int64_t token,
                              int& slot_in_page) {
  const std::int32_t sequence = batch.token_sequence[token];
  const std::int32_t position = batch.positions[token];
  if (position < 0) return -1;
  const std::int32_t index = batch.mirrored[static_cast<std::int64_t>(sequence) * 2];
  const std::int32_t slot = batch.mirrored[static_cast<std::int64_t>(sequence) * 2 + 1];
  if (index != position / pages.page_size || slot < 0 || slot >= pages.mirror_slots) return -1;
  slot_in_page = position % pages.page_size;
  return slot;
}

__device__ std::uint16_t* mirror_row(const KvPlaneArgs& plane, const KvPagesArgs& pages, int slot,
                                     int slot_in_page) {
  return reinterpret_cast<std::uint16_t*>(plane.mirror + slot * plane.mirror_page_bytes) +
         static_cast<std::int64_t>(slot_in_page) * pages.kv_heads * pages.head_dim;
}

// One thread per element: FP16 and FP8 halves, stored as they are.
__global__ void __launch_bounds__(kThreads)
    write_mirror_plain(KvPlaneArgs plane, KvPagesArgs pages, BatchArgs batch,
                       const float* __restrict__ values) {
  const std::int64_t row = std::int64_t{pages.kv_heads} * pages.head_dim;
  const std::int64_t index = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x;
  if (index >= batch.tokens * row) return;
  int slot_in_page = 0;
  const int slot = mirror_slot_of(pages, batch, index / row, slot_in_page);
  if (slot < 0) return;
  mirror_row(plane, pages, slot, slot_in_page)[index % row] =
      __half_as_ushort(__float2half_rn(values[index]));
}

// One warp per 32-element group: integer halves, rotated as their pages are.
__global__ void __launch_bounds__(kThreads)
    write_mirror_rotated(KvPlaneArgs plane, KvPagesArgs pages, BatchArgs batch,
                         const float* __restrict__ values) {
  const std::int64_t groups = std::int64_t{pages.kv_heads} * pages.head_dim / 32;
  const std::int64_t warp = (blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x & 31);
  if (warp >= batch.tokens * groups) return;  // the whole warp leaves together
  int slot_in_page = 0;
  const int slot = mirror_slot_of(pages, batch, warp / groups, slot_in_page);
  if (slot < 0) return;  // the same for the warp's lanes
  const float rotated = cache_codec::hadamard32_warp(values[warp * 32 + lane], lane);
  mirror_row(plane, pages, slot, slot_in_page)[(warp % groups) * 32 + lane] =
      __half_as_ushort(__float2half_rn(rotated));
}

void write_mirror(const KvPlaneArgs& plane, const KvPagesArgs& pages, const BatchArgs& batch,
                  const float* values, cudaStream_t stream) {
  const std::int64_t elements = batch.tokens * pages.kv_heads * pages.head_dim;
  if (is_integer(plane.coding)) {
    write_mirror_rotated<<<blocks_for(elements), kThreads, 0, stream>>>(plane, pages, batch,
                                                                        values);
  } else {
    write_mirror_plain<<<blocks_for(elements), kThreads, 0, stream>>>(plane, pages, batch, values);
  }
  check(cudaGetLastError(), "write_kv (mirrors)");
}

// One thread per element of the page's first tokens: decoded as attention
// decodes it (integer levels stay rotated), stored as FP16.
__global__ void __launch_bounds__(kThreads)
    fill_mirror_kernel(KvPlaneArgs plane, KvPagesArgs pages, int page, int slot, int tokens) {
  const std::int64_t row = std::int64_t{pages.kv_heads} * pages.head_dim;
  const std::int64_t index = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x;
  if (index >= tokens * row) return;
  const int token = static_cast<int>(index / row);
  const int head = static_cast<int>(index % row / pages.head_dim);
  const int element = static_cast<int>(index % pages.head_dim);
  const std::uint8_t* data =
      kv_device::head_data(plane, pages.kv_heads, pages.head_dim, page, token, head);
  float value = 0.0f;
  switch (plane.coding) {
    case KvCoding::Fp16:
      value = __half2float(__ushort_as_half(reinterpret_cast<const std::uint16_t*>(data)[element]));
      break;
    case KvCoding::Fp8:
      value = __fmul_rn(cache_codec::decode_e4m3(data[element]),
                        *kv_device::page_scale(plane, page, head));
      break;
    case KvCoding::Int8: {
      const std::uint16_t scale_bits = kv_device::head_scales(plane, pages.kv_heads, pages.head_dim,
                                                              page, token, head)[element / 32];
      value = cache_codec::level_value<8>(static_cast<int>(data[element]),
                                          cache_codec::level_step<8>(scale_bits));
      break;
    }
    case KvCoding::Int4: {
      const std::uint16_t scale_bits = kv_device::head_scales(plane, pages.kv_heads, pages.head_dim,
                                                              page, token, head)[element / 32];
      const unsigned byte = data[element / 2];
      const int level = static_cast<int>(element % 2 == 0 ? byte & 0xfu : byte >> 4);
      value = cache_codec::level_value<4>(level, cache_codec::level_step<4>(scale_bits));
      break;
    }
  }
  mirror_row(plane, pages, slot, token)[index % row] = __half_as_ushort(__float2half_rn(value));
}

}  // namespace

void launch_write_mirrors(const KvPagesArgs& pages, const BatchArgs& batch, const float* key,
                          const float* value, Stream stream) {
  if (batch.tokens <= 0 || batch.mirrored == nullptr || pages.mirror_slots <= 0) return;
  auto cuda_stream = static_cast<cudaStream_t>(stream);
  write_mirror(pages.key, pages, batch, key, cuda_stream);
  write_mirror(pages.value, pages, batch, value, cuda_stream);
}

void launch_fill_mirror(const KvPagesArgs& pages, int page, int slot, int tokens, Stream stream) {
  if (tokens <= 0) return;
  auto cuda_stream = static_cast<cudaStream_t>(stream);
  const std::int64_t elements = std::int64_t{tokens} * pages.kv_heads * pages.head_dim;
  for (const KvPlaneArgs& plane : {pages.key, pages.value}) {
    fill_mirror_kernel<<<blocks_for(elements), kThreads, 0, cuda_stream>>>(plane, pages, page, slot,
                                                                           tokens);
  }
  check(cudaGetLastError(), "fill_mirror");
}

}  // namespace quire::kernels::cuda
