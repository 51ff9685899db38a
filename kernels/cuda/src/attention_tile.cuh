#pragma once

// The tiled paged-attention kernel behind both launch paths
// (attention_decode.cu, attention_prefill.cu): flash attention in FP32 on the
// CUDA cores, with the cache's codings decoded inside the kernel.
//
// A block of four warps takes R query rows that share one K/V head (tokens
// times query heads of the group, AttentionShape) and walks one part of their
// key range 32 keys at a time:
//   1. the tile's keys and values are read through the block table, decoded
//      to FP32 and kept in shared memory, once for all R rows;
//   2. each warp scores its rows (w, w + 4, ...) against the tile, one key
//      per lane, soft-caps the scores where the call asks (Gemma 2), and
//      folds them in with an online softmax: a running maximum and sum per
//      row, earlier sums rescaled when the maximum grows;
//   3. the same warp adds the weighted values into its rows' sums, lane l
//      holding columns l, l + 32, ... in registers.
// Rows of a block whose tokens belong to different sequences (a step that
// mixes sequences) are taken one run of equal sequence at a time.
//
// Integer pages hold each 32-element group rotated by the orthonormal
// Hadamard transform H, which is symmetric and its own inverse: q . (H k) =
// (H q) . k and sum p_j (H v_j) = H (sum p_j v_j). So, as on the CPU, the
// query is rotated once, scores and sums are taken on the stored levels times
// their scales, and each output group is rotated back once at the end (lane l
// holds element l of every group, so a rotation is five warp shuffles).
//
// A split part (shape.splits > 1) stores its rows' unnormalized sums, maximum
// and total instead of the output; launch_attention_merge combines them.

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <climits>
#include <cstdint>
#include <string>
#include <type_traits>

#include "cache_quant.cuh"
#include "kv_device.cuh"
#include "kv_ops.h"
#include "quire/kernels/cuda/cuda_error.h"

namespace quire::kernels::cuda::attention {

constexpr int kThreads = 128;
constexpr int kWarps = kThreads / 32;
constexpr int kTileKeys = kAttentionTileKeys;  // one key per lane when scoring

__device__ inline float minus_infinity() {
  return __int_as_float(0xff800000);
}

__host__ __device__ constexpr bool is_integer(KvCoding coding) {
  return coding == KvCoding::Int8 || coding == KvCoding::Int4;
}

// Shared memory of one block, in floats: the rows' queries (scaled, rotated
// for integer keys), the tile's keys (rows padded by 4 floats so that lanes
// reading different keys hit different banks), values, and weights.
template <int D, int R>
struct Tile {
  static_assert(D % 16 == 0 && D <= kAttentionMaxHeadDim && R % kWarps == 0);
  static constexpr int kRowsPerWarp = R / kWarps;
  // Columns per lane: lane l holds l, l + 32, ...; the last one only on the
  // first D % 32 lanes when D is an odd multiple of 16.
  static constexpr int kColumns = (D + 31) / 32;
  static constexpr int kKeyStride = D + 4;
  static constexpr int kQueryFloats = R * D;
  static constexpr int kKeyFloats = kTileKeys * kKeyStride;
  static constexpr int kValueFloats = kTileKeys * D;
  static constexpr int kWeightFloats = R * kTileKeys;
  static constexpr std::size_t kSharedBytes =
      sizeof(float) * (kQueryFloats + kKeyFloats + kValueFloats + kWeightFloats);
  // The host plans with kv_ops.h's count: they must agree.
  static_assert(kSharedBytes == attention_tile_bytes(D, R));
};

// Elements decoded from one 16-byte load.
template <KvCoding Coding>
__host__ __device__ constexpr int chunk_elements() {
  return Coding == KvCoding::Fp16 ? 8 : Coding == KvCoding::Int4 ? 32 : 16;
}

// One 16-byte load of a head vector to FP32, elements [first, first + E) of
// the head; integer codings stay in the rotated domain.
template <KvCoding Coding, int D>
__device__ inline void decode_chunk(const KvPlaneArgs& plane, int kv_heads, int kv_head, int page,
                                    int slot, int first, float* out) {
  const std::uint8_t* head = kv_device::head_data(plane, kv_heads, D, page, slot, kv_head);
  const uint4 raw =
      *reinterpret_cast<const uint4*>(head + first * kv_device::data_bits(Coding) / 8);
  const unsigned words[4] = {raw.x, raw.y, raw.z, raw.w};
  if constexpr (Coding == KvCoding::Fp16) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const float2 pair = __half22float2(
          __halves2half2(__ushort_as_half(static_cast<unsigned short>(words[i] & 0xffffu)),
                         __ushort_as_half(static_cast<unsigned short>(words[i] >> 16))));
      out[2 * i] = pair.x;
      out[2 * i + 1] = pair.y;
    }
  } else if constexpr (Coding == KvCoding::Fp8) {
    const float scale = *kv_device::page_scale(plane, page, kv_head);
#pragma unroll
    for (int i = 0; i < 16; ++i) {
      const auto code = static_cast<std::uint8_t>(words[i / 4] >> (8 * (i % 4)));
      out[i] = __fmul_rn(cache_codec::decode_e4m3(code), scale);
    }
  } else {
    constexpr int kBits = Coding == KvCoding::Int8 ? 8 : 4;
    const std::uint16_t scale_bits =
        kv_device::head_scales(plane, kv_heads, D, page, slot, kv_head)[first / 32];
    const float step = cache_codec::level_step<kBits>(scale_bits);
#pragma unroll
    for (int i = 0; i < 16; ++i) {
      const unsigned byte = (words[i / 4] >> (8 * (i % 4))) & 0xffu;
      if constexpr (kBits == 8) {
        out[i] = cache_codec::level_value<8>(static_cast<int>(byte), step);
      } else {
        out[2 * i] = cache_codec::level_value<4>(static_cast<int>(byte & 0xfu), step);
        out[2 * i + 1] = cache_codec::level_value<4>(static_cast<int>(byte >> 4), step);
      }
    }
  }
}

// The tile's 32 head vectors of one plane into tile[key * stride + element];
// keys without a page (past the range, or a bad page-table entry) read as 0.
// Pages from num_pages on are the plane's FP16 mirrors (kv_device::read_slot_at).
template <KvCoding Coding, int D>
__device__ inline void load_plane_as(const KvPlaneArgs& plane, int kv_heads, int kv_head,
                                     int num_pages, const int* key_page, const int* key_slot,
                                     float* tile, int stride) {
  constexpr int kElements = chunk_elements<Coding>();
  constexpr int kPerKey = D / kElements;
  constexpr int kChunks = kTileKeys * kPerKey;
#pragma unroll 4
  for (int c = static_cast<int>(threadIdx.x); c < kChunks; c += kThreads) {
    const int key = c / kPerKey;
    const int first = (c % kPerKey) * kElements;
    float values[kElements];
    const int page = key_page[key];
    if (page >= num_pages) {
      const KvPlaneArgs mirror = kv_device::mirror_plane(plane);
#pragma unroll
      for (int part = 0; part < kElements; part += 8) {
        decode_chunk<KvCoding::Fp16, D>(mirror, kv_heads, kv_head, page - num_pages, key_slot[key],
                                        first + part, values + part);
      }
    } else if (page >= 0) {
      decode_chunk<Coding, D>(plane, kv_heads, kv_head, page, key_slot[key], first, values);
    } else {
#pragma unroll
      for (int i = 0; i < kElements; ++i)
        values[i] = 0.0f;
    }
    float* target = tile + key * stride + first;
#pragma unroll
    for (int i = 0; i < kElements; i += 4) {
      *reinterpret_cast<float4*>(target + i) =
          make_float4(values[i], values[i + 1], values[i + 2], values[i + 3]);
    }
  }
}

template <int D>
__device__ inline void load_plane(const KvPlaneArgs& plane, int kv_heads, int kv_head,
                                  int num_pages, const int* key_page, const int* key_slot,
                                  float* tile, int stride) {
  switch (plane.coding) {  // the same for the whole launch: no divergence
    case KvCoding::Fp16:
      load_plane_as<KvCoding::Fp16, D>(plane, kv_heads, kv_head, num_pages, key_page, key_slot,
                                       tile, stride);
      return;
    case KvCoding::Fp8:
      load_plane_as<KvCoding::Fp8, D>(plane, kv_heads, kv_head, num_pages, key_page, key_slot, tile,
                                      stride);
      return;
    case KvCoding::Int8:
    case KvCoding::Int4:
      // Integer pages need head_dim % 32 == 0 (checked on the host).
      if constexpr (D % 32 == 0) {
        if (plane.coding == KvCoding::Int8) {
          load_plane_as<KvCoding::Int8, D>(plane, kv_heads, kv_head, num_pages, key_page, key_slot,
                                           tile, stride);
        } else {
          load_plane_as<KvCoding::Int4, D>(plane, kv_heads, kv_head, num_pages, key_page, key_slot,
                                           tile, stride);
        }
      }
      return;
  }
}

// Whether lane `lane` holds a real column in its column slot c.
template <int D>
__device__ inline bool column_present(int c, int lane) {
  return D % 32 == 0 || c * 32 + lane < D;
}

template <int D, int R>
__global__ void __launch_bounds__(kThreads) attention_kernel(const AttentionCall call) {
  using T = Tile<D, R>;
  extern __shared__ float4 shared_memory[];
  float* queries = reinterpret_cast<float*>(shared_memory);
  float* keys = queries + T::kQueryFloats;
  float* values = keys + T::kKeyFloats;
  float* weights = values + T::kValueFloats;
  __shared__ std::int64_t row_token[R];  // -1: no row
  __shared__ int row_head[R], row_sequence[R], row_first[R], row_last[R];
  __shared__ int key_page[kTileKeys], key_slot[kTileKeys];

  const KvPagesArgs& pages = call.pages;
  const AttentionShape& shape = call.shape;
  const AttentionArgs& args = call.args;
  const int warp = static_cast<int>(threadIdx.x / 32);
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int kv_head = static_cast<int>(blockIdx.y);
  const int split = static_cast<int>(blockIdx.z);
  const int chunk = static_cast<int>(blockIdx.x % static_cast<unsigned>(shape.head_chunks));
  const std::int64_t first_token =
      std::int64_t{blockIdx.x / static_cast<unsigned>(shape.head_chunks)} * shape.tokens_per_block;

  // Row r: token first_token + r / head_chunk, query head chunk * head_chunk
  // + r % head_chunk of the K/V head's group; its keys [first, last].
  for (int r = static_cast<int>(threadIdx.x); r < R; r += kThreads) {
    const std::int64_t token = first_token + r / shape.head_chunk;
    const int g = chunk * shape.head_chunk + r % shape.head_chunk;
    const bool valid = r < shape.tokens_per_block * shape.head_chunk && token < call.batch.tokens &&
                       g < args.group;
    row_token[r] = valid ? token : -1;
    row_head[r] = kv_head * args.group + g;
    row_sequence[r] = valid ? call.batch.token_sequence[token] : -1;
    const int position = valid ? call.batch.positions[token] : -1;
    row_first[r] = args.sliding_window > 0 ? max(0, position - args.sliding_window + 1) : 0;
    // A negative position has no keys; a position inside a block that
    // attends both ways sees the whole block (TokenBatch::visible_through).
    const bool blocks = valid && call.batch.visible_through != nullptr;
    if (blocks && args.sliding_window > 0)
      row_first[r] = min(row_first[r], call.batch.visible_from[token]);
    row_last[r] = blocks ? call.batch.visible_through[token] : position;
  }
  __syncthreads();

  // Integer pages exist only for D % 32 == 0 (whole Hadamard groups).
  const bool rotated_keys = D % 32 == 0 && is_integer(pages.key.coding);
  const bool rotated_values = D % 32 == 0 && is_integer(pages.value.coding);
#pragma unroll
  for (int k = 0; k < T::kRowsPerWarp; ++k) {
    const int r = warp + kWarps * k;
    const std::int64_t token = row_token[r];
#pragma unroll
    for (int c = 0; c < T::kColumns; ++c) {
      const bool present = column_present<D>(c, lane);
      float q = 0.0f;
      if (token >= 0 && present) {
        q = args.query[(token * args.heads + row_head[r]) * D + c * 32 + lane];
      }
      if (rotated_keys) q = cache_codec::hadamard32_warp(q, lane);
      if (present) queries[r * D + c * 32 + lane] = __fmul_rn(q, args.scale);
    }
  }
  __syncthreads();

  // Runs of rows of one sequence ("segments"); usually the whole block.
  for (int begin = 0; begin < R;) {
    if (row_token[begin] < 0) {
      ++begin;
      continue;
    }
    const int sequence = row_sequence[begin];
    int end = begin + 1;
    while (end < R && row_token[end] >= 0 && row_sequence[end] == sequence)
      ++end;
    int key_first = INT_MAX, key_last = -1;
    for (int r = begin; r < end; ++r) {
      key_first = min(key_first, row_first[r]);
      key_last = max(key_last, row_last[r]);
    }
    // This block's part of the range, whole tiles except at the end.
    std::int64_t low = 0, high = -1;
    if (key_last >= key_first) {
      const std::int64_t length = std::int64_t{key_last} - key_first + 1;
      std::int64_t part = (length + shape.splits - 1) / shape.splits;
      part = (part + kTileKeys - 1) / kTileKeys * kTileKeys;
      low = key_first + split * part;
      high = low + part - 1 < key_last ? low + part - 1 : std::int64_t{key_last};
    }

    float maximum[T::kRowsPerWarp], total[T::kRowsPerWarp], sums[T::kRowsPerWarp][T::kColumns];
#pragma unroll
    for (int k = 0; k < T::kRowsPerWarp; ++k) {
      maximum[k] = minus_infinity();
      total[k] = 0.0f;
#pragma unroll
      for (int c = 0; c < T::kColumns; ++c)
        sums[k][c] = 0.0f;
    }

    for (std::int64_t start = low; start <= high; start += kTileKeys) {
      if (threadIdx.x < kTileKeys) {
        const std::int64_t position = start + threadIdx.x;
        kv_device::Slot at;
        if (position <= high) {
          at = kv_device::read_slot_at(call.batch, pages.page_size, pages.num_pages,
                                       pages.mirror_slots, sequence,
                                       static_cast<std::int32_t>(position));
        }
        key_page[threadIdx.x] = at.page;
        key_slot[threadIdx.x] = at.slot;
      }
      __syncthreads();
      load_plane<D>(pages.key, pages.kv_heads, kv_head, pages.num_pages, key_page, key_slot, keys,
                    T::kKeyStride);
      load_plane<D>(pages.value, pages.kv_heads, kv_head, pages.num_pages, key_page, key_slot,
                    values, D);
      __syncthreads();

      // Scores: lane = key, for each of the warp's rows.
      float score[T::kRowsPerWarp];
#pragma unroll
      for (int k = 0; k < T::kRowsPerWarp; ++k)
        score[k] = 0.0f;
      const float* key_row = keys + lane * T::kKeyStride;
#pragma unroll 4
      for (int d = 0; d < D; d += 4) {
        const float4 key = *reinterpret_cast<const float4*>(key_row + d);
#pragma unroll
        for (int k = 0; k < T::kRowsPerWarp; ++k) {
          const float4 q = *reinterpret_cast<const float4*>(queries + (warp + kWarps * k) * D + d);
          score[k] = fmaf(q.x, key.x, score[k]);
          score[k] = fmaf(q.y, key.y, score[k]);
          score[k] = fmaf(q.z, key.z, score[k]);
          score[k] = fmaf(q.w, key.w, score[k]);
        }
      }

      // Soft-capping (Gemma 2): the same for the whole launch, so no divergence,
      // and a call without it runs the code it ran before.
      if (args.softcap > 0.0f) {
#pragma unroll
        for (int k = 0; k < T::kRowsPerWarp; ++k)
          score[k] = __fmul_rn(args.softcap, tanhf(__fdiv_rn(score[k], args.softcap)));
      }

      // Online softmax: keys outside a row's [first, last] weigh 0.
      const std::int64_t position = start + lane;
      const bool key_present = key_page[lane] >= 0;
#pragma unroll
      for (int k = 0; k < T::kRowsPerWarp; ++k) {
        const int r = warp + kWarps * k;
        const bool valid = key_present && r >= begin && r < end && row_first[r] <= position &&
                           position <= row_last[r];
        const float s = valid ? score[k] : minus_infinity();
        const float grown = fmaxf(maximum[k], cache_codec::warp_max(s));
        const float correction = grown == maximum[k] ? 1.0f : expf(maximum[k] - grown);
        // A row without keys so far keeps weight 0; any finite base does.
        const float base = grown == minus_infinity() ? 0.0f : grown;
        const float weight = valid ? expf(s - base) : 0.0f;
        total[k] = total[k] * correction + cache_codec::warp_sum(weight);
        maximum[k] = grown;
        weights[r * kTileKeys + lane] = weight;
#pragma unroll
        for (int c = 0; c < T::kColumns; ++c)
          sums[k][c] *= correction;
      }
      __syncwarp();  // each warp reads back only the weights of its own rows

#pragma unroll 4
      for (int j = 0; j < kTileKeys; ++j) {
        float value[T::kColumns];
#pragma unroll
        for (int c = 0; c < T::kColumns; ++c)
          value[c] = column_present<D>(c, lane) ? values[j * D + c * 32 + lane] : 0.0f;
#pragma unroll
        for (int k = 0; k < T::kRowsPerWarp; ++k) {
          const float weight = weights[(warp + kWarps * k) * kTileKeys + j];
#pragma unroll
          for (int c = 0; c < T::kColumns; ++c)
            sums[k][c] = fmaf(weight, value[c], sums[k][c]);
        }
      }
      __syncthreads();  // the next tile overwrites keys, values and pages
    }

#pragma unroll
    for (int k = 0; k < T::kRowsPerWarp; ++k) {
      const int r = warp + kWarps * k;
      if (r < begin || r >= end) continue;  // the same for the whole warp
      const std::int64_t row = row_token[r] * args.heads + row_head[r];
      if (shape.splits == 1) {
        const float inverse = total[k] > 0.0f ? 1.0f / total[k] : 0.0f;
#pragma unroll
        for (int c = 0; c < T::kColumns; ++c) {
          float v = sums[k][c];
          if (rotated_values) v = cache_codec::hadamard32_warp(v, lane);
          if (column_present<D>(c, lane)) args.out[row * D + c * 32 + lane] = v * inverse;
        }
      } else {
        const std::int64_t at = row * shape.splits + split;
#pragma unroll
        for (int c = 0; c < T::kColumns; ++c) {
          if (column_present<D>(c, lane)) call.partial_values[at * D + c * 32 + lane] = sums[k][c];
        }
        if (lane == 0) {
          call.partial_max[at] = maximum[k];
          call.partial_sum[at] = total[k];
        }
      }
    }
    begin = end;
  }
}

// Launches attention_kernel<D, R> over the call's grid.
template <int D, int R>
void launch_tile_kernel(const AttentionCall& call, cudaStream_t stream, const char* operation) {
  constexpr std::size_t kBytes = Tile<D, R>::kSharedBytes;
  auto* kernel = &attention_kernel<D, R>;
  // Beyond 48 KiB of dynamic shared memory a kernel must ask; the setting is
  // per device, so it is made on every launch (a cheap host call).
  if (kBytes > 48 * 1024) {
    check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               static_cast<int>(kBytes)),
          operation);
  }
  const AttentionShape& shape = call.shape;
  const dim3 grid(static_cast<unsigned>(shape.row_blocks * shape.head_chunks),
                  static_cast<unsigned>(call.pages.kv_heads), static_cast<unsigned>(shape.splits));
  kernel<<<grid, kThreads, kBytes, stream>>>(call);
  check(cudaGetLastError(), operation);
}

// launch(std::integral_constant<int, D>{}) for the call's head dimension, a
// multiple of 16 from D up to kAttentionMaxHeadDim.
template <int D = 16, typename Launch>
void with_head_dim(int head_dim, Launch&& launch) {
  if constexpr (D > kAttentionMaxHeadDim) {
    throw CudaError("paged_attention", cudaErrorInvalidValue,
                    "no attention kernel for head_dim " + std::to_string(head_dim));
  } else {
    if (head_dim == D) {
      launch(std::integral_constant<int, D>{});
    } else {
      with_head_dim<D + 16>(head_dim, launch);
    }
  }
}

}  // namespace quire::kernels::cuda::attention
