// write_kv: new keys and values [tokens, kv_heads, head_dim] encoded into their
// pages, byte for byte as the CPU backend writes them
// (kernels/cpu/backend/src/cpu_kv_pages.cpp).
//
// FP16 and the integer codings encode each token's head vector on its own, so
// every element (FP16) or 32-element group (Q8, Q4: one warp, cache_quant.cuh)
// is independent. FP8 shares one scale per page and head among the page's
// tokens, and a write that needs a larger scale re-encodes the tokens before
// it; the CPU does this token by token in batch order, and repeated exponent
// shifts can round differently from one combined shift. So each (page, head)
// is given to one warp that replays the CPU's steps for the batch's tokens of
// that page in batch order; pages are independent and run side by side.
// Calibrated FP8 scales are fixed, so their elements are independent too.

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "cache_quant.cuh"
#include "kv_device.cuh"
#include "kv_ops.h"
#include "quire/kernels/cuda/cuda_error.h"

namespace quire::kernels::cuda {
namespace {

using cache_codec::kFullMask;

constexpr int kThreads = 256;
constexpr int kWarpsPerBlock = kThreads / 32;

unsigned blocks_for(std::int64_t threads) {
  return static_cast<unsigned>((threads + kThreads - 1) / kThreads);
}

// The geometry every write kernel needs besides its plane.
struct Geometry {
  int page_size;
  int kv_heads;
  int head_dim;
  int num_pages;
};

// The element of the batch's rows that a thread of a one-thread-per-element
// kernel writes, and where in the pages it goes.
struct ElementAt {
  std::int64_t index;   // in values
  std::int64_t row;     // elements per token: kv_heads * head_dim
  std::int64_t within;  // head * head_dim + element
  kv_device::Slot at;
};

// False for a thread past the batch's elements or one whose token has no page
// (a position the cache does not keep): that thread writes nothing.
__device__ bool element_of_thread(const Geometry& g, const BatchArgs& batch, ElementAt& element) {
  element.row = std::int64_t{g.kv_heads} * g.head_dim;
  element.index = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x;
  if (element.index >= batch.tokens * element.row) return false;
  element.within = element.index % element.row;
  element.at =
      kv_device::slot_of_token(batch, g.page_size, g.num_pages, element.index / element.row);
  return element.at.page >= 0;
}

// One thread per element.
__global__ void __launch_bounds__(kThreads)
    write_fp16_kernel(KvPlaneArgs plane, Geometry g, BatchArgs batch,
                      const float* __restrict__ values) {
  ElementAt e;
  if (!element_of_thread(g, batch, e)) return;
  auto* target = reinterpret_cast<std::uint16_t*>(plane.data + e.at.page * plane.data_page_bytes);
  target[e.at.slot * e.row + e.within] = __half_as_ushort(__float2half_rn(values[e.index]));
}

// One warp per 32-element group of a token's row; a head's groups are
// consecutive, so group q of the row is group q % (head_dim / 32) of head
// q / (head_dim / 32), and its bytes and scale follow the row's.
template <int Bits>
__global__ void __launch_bounds__(kThreads)
    write_int_kernel(KvPlaneArgs plane, Geometry g, BatchArgs batch,
                     const float* __restrict__ values) {
  const std::int64_t groups = std::int64_t{g.kv_heads} * g.head_dim / 32;
  const std::int64_t warp = (blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x & 31);
  if (warp >= batch.tokens * groups) return;  // the whole warp leaves together
  const std::int64_t token = warp / groups;
  const std::int64_t group = warp % groups;
  const kv_device::Slot at = kv_device::slot_of_token(batch, g.page_size, g.num_pages, token);
  if (at.page < 0) return;

  std::uint16_t scale = 0;
  const int level = cache_codec::quantize_lane<Bits>(values[warp * 32 + lane], lane, scale);
  const std::int64_t group_index = at.slot * groups + group;
  if (lane == 0) {
    reinterpret_cast<std::uint16_t*>(plane.scales + at.page * plane.scale_page_bytes)[group_index] =
        scale;
  }
  std::uint8_t* data = plane.data + at.page * plane.data_page_bytes + group_index * (32 * Bits / 8);
  if constexpr (Bits == 8) {
    data[lane] = static_cast<std::uint8_t>(level);
  } else {
    // Element e in byte e / 2, the low nibble for even e (cache_quant.h).
    const int upper = __shfl_down_sync(kFullMask, level, 1);
    if ((lane & 1) == 0) data[lane / 2] = static_cast<std::uint8_t>(level | (upper << 4));
  }
}

// One token written into an FP8 page-head whose current scale is `scale`:
// fp8_write_head of the CPU reference for one token at `slot`, one warp.
__device__ void write_fp8_token(std::uint8_t* page_codes, std::int64_t token_stride, int head_dim,
                                int slot, const float* __restrict__ source, float& scale) {
  const int lane = static_cast<int>(threadIdx.x & 31);
  if (slot == 0) scale = 0.0f;  // the page starts afresh
  float absmax = 0.0f;
  for (int d = lane; d < head_dim; d += 32)
    absmax = fmaxf(absmax, fabsf(source[d]));
  const float needed = cache_codec::fp8_scale_for(cache_codec::warp_max(absmax));
  if (needed > scale) {
    if (scale > 0.0f) {
      // Re-encode slots [0, slot): a power-of-two ratio is an exponent shift.
      const float ratio = __fdiv_rn(scale, needed);
      for (int e = lane; e < slot * head_dim; e += 32) {
        std::uint8_t* code = page_codes + (e / head_dim) * token_stride + e % head_dim;
        *code = cache_codec::encode_e4m3(__fmul_rn(cache_codec::decode_e4m3(*code), ratio));
      }
    }
    scale = needed;
  }
  const float inverse = scale > 0.0f ? __fdiv_rn(1.0f, scale) : 0.0f;
  std::uint8_t* codes = page_codes + slot * token_stride;
  for (int d = lane; d < head_dim; d += 32)
    codes[d] = cache_codec::encode_e4m3(__fmul_rn(source[d], inverse));
  // The next token of this page may re-encode what other lanes just wrote.
  __syncwarp();
}

// One warp per (token, head). The warp of the first token in batch order that
// writes a page (its "leader") handles every token of the batch on that
// page, in batch order; the other warps leave at once.
__global__ void __launch_bounds__(kThreads)
    write_fp8_kernel(KvPlaneArgs plane, Geometry g, BatchArgs batch,
                     const float* __restrict__ values) {
  const std::int64_t warp = (blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x & 31);
  if (warp >= batch.tokens * g.kv_heads) return;
  const std::int64_t token = warp / g.kv_heads;
  const int head = static_cast<int>(warp % g.kv_heads);
  const int page = kv_device::slot_of_token(batch, g.page_size, g.num_pages, token).page;
  if (page < 0) return;

  // Leader: no earlier token of the batch writes this page. Earlier tokens
  // are scanned backwards, 32 at a time; a prefill chunk's neighbour usually
  // shares the page, so most warps stop after one step.
  for (std::int64_t base = token - 32; base > -32; base -= 32) {
    const std::int64_t t = base + lane;
    const bool same =
        t >= 0 && kv_device::slot_of_token(batch, g.page_size, g.num_pages, t).page == page;
    if (__any_sync(kFullMask, same)) return;
  }

  const std::int64_t row = std::int64_t{g.kv_heads} * g.head_dim;  // bytes per slot
  float* scale_at = kv_device::page_scale(plane, page, head);
  float scale = *scale_at;
  std::uint8_t* page_codes = kv_device::head_data(plane, g.kv_heads, g.head_dim, page, 0, head);
  for (std::int64_t base = token; base < batch.tokens; base += 32) {
    const std::int64_t t = base + lane;
    kv_device::Slot at;
    if (t < batch.tokens) at = kv_device::slot_of_token(batch, g.page_size, g.num_pages, t);
    unsigned on_page = __ballot_sync(kFullMask, at.page == page);
    while (on_page != 0) {
      const int source_lane = __ffs(static_cast<int>(on_page)) - 1;
      on_page &= on_page - 1;
      const int slot = __shfl_sync(kFullMask, at.slot, source_lane);
      const float* source = values + ((base + source_lane) * g.kv_heads + head) * g.head_dim;
      write_fp8_token(page_codes, row, g.head_dim, slot, source, scale);
    }
  }
  if (lane == 0) *scale_at = scale;
}

// Calibrated FP8: one thread per element, value / scale[head] as E4M3 (the
// division rounded as the CPU's); the thread of a head's first element also
// stores the head's scale into the page, so attention reads it as any FP8
// page. Every token of a page stores the same value there.
__global__ void __launch_bounds__(kThreads)
    write_fp8_calibrated_kernel(KvPlaneArgs plane, Geometry g, BatchArgs batch,
                                const float* __restrict__ values) {
  ElementAt e;
  if (!element_of_thread(g, batch, e)) return;
  const int head = static_cast<int>(e.within / g.head_dim);
  const float scale = plane.calibrated[head];
  if (e.within % g.head_dim == 0) *kv_device::page_scale(plane, e.at.page, head) = scale;
  std::uint8_t* codes = plane.data + e.at.page * plane.data_page_bytes;
  codes[e.at.slot * e.row + e.within] = cache_codec::encode_e4m3(__fdiv_rn(values[e.index], scale));
}

void write_plane(const KvPlaneArgs& plane, const Geometry& geometry, const BatchArgs& batch,
                 const float* values, cudaStream_t stream) {
  const std::int64_t elements = batch.tokens * geometry.kv_heads * geometry.head_dim;
  switch (plane.coding) {
    case KvCoding::Fp16:
      write_fp16_kernel<<<blocks_for(elements), kThreads, 0, stream>>>(plane, geometry, batch,
                                                                       values);
      break;
    case KvCoding::Int8:
      write_int_kernel<8>
          <<<blocks_for(elements), kThreads, 0, stream>>>(plane, geometry, batch, values);
      break;
    case KvCoding::Int4:
      write_int_kernel<4>
          <<<blocks_for(elements), kThreads, 0, stream>>>(plane, geometry, batch, values);
      break;
    case KvCoding::Fp8: {
      if (plane.calibrated != nullptr) {
        write_fp8_calibrated_kernel<<<blocks_for(elements), kThreads, 0, stream>>>(plane, geometry,
                                                                                   batch, values);
        break;
      }
      const std::int64_t warps = batch.tokens * geometry.kv_heads;
      write_fp8_kernel<<<static_cast<unsigned>((warps + kWarpsPerBlock - 1) / kWarpsPerBlock),
                         kThreads, 0, stream>>>(plane, geometry, batch, values);
      break;
    }
  }
  check(cudaGetLastError(), "write_kv");
}

}  // namespace

void launch_write_kv(const KvPagesArgs& pages, const BatchArgs& batch, const float* key,
                     const float* value, Stream stream) {
  if (batch.tokens <= 0) return;
  const Geometry geometry{pages.page_size, pages.kv_heads, pages.head_dim, pages.num_pages};
  auto cuda_stream = static_cast<cudaStream_t>(stream);
  write_plane(pages.key, geometry, batch, key, cuda_stream);
  write_plane(pages.value, geometry, batch, value, cuda_stream);
}

}  // namespace quire::kernels::cuda
