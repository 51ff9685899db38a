#pragma once

// The half2 decode products' shared steps (linear_exl2_half2.cu and
// linear_gptq_half2.cu): a warp stages a 32-row block of inputs in FP16, each
// row scaled by its own power of two (half2_unpack.h's block_input_scale),
// in the order the block's weights unpack to; then every lane unpacks its
// column's words to half2 pairs of q - zero and multiply-adds them with the
// staged pairs in half2, a block at a time, the block's sum returning to
// FP32 with the scale undone. The FP16 steps are half2_unpack.h's, which the
// CPU tests check with a software FP16 (tests/kernels/half2).

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>

#include "linear_common.cuh"
#include "quire/kernels/cuda/half2_unpack.h"

namespace quire::kernels::cuda::linear_detail {

// half2_unpack.h's lane-wise FP16 steps on the GPU's half2 instructions.
struct DeviceHalf2Ops {
  static __device__ __forceinline__ __half2 as_pair(std::uint32_t bits) {
    __half2 pair;
    std::memcpy(&pair, &bits, sizeof pair);
    return pair;
  }
  static __device__ __forceinline__ std::uint32_t as_bits(__half2 pair) {
    std::uint32_t bits;
    std::memcpy(&bits, &pair, sizeof bits);
    return bits;
  }
  static __device__ __forceinline__ std::uint32_t sub(std::uint32_t a, std::uint32_t b) {
    return as_bits(__hsub2(as_pair(a), as_pair(b)));
  }
  static __device__ __forceinline__ std::uint32_t fma(std::uint32_t a, std::uint32_t b,
                                                      std::uint32_t c) {
    return as_bits(__hfma2(as_pair(a), as_pair(b), as_pair(c)));
  }
  static __device__ __forceinline__ std::uint16_t from_float(float x) {
    return __half_as_ushort(__float2half_rn(x));
  }
};

// Where a warp's lanes find the inputs of a block and stage them.
struct HalfStage {
  const std::int32_t* perm;  // null: the identity
  const float* x;
  std::int64_t x_stride;
  std::uint16_t* staged;  // the warp's [Rows][32] halves of shared memory (16-byte aligned)
  float* inverse;         // the warp's [Rows] floats of shared memory: 1 / each row's factor
  int lane;
};

// Where lane j of a warp finds input k0 + j of a block's rows: through the
// permutation, and nowhere for lanes past `count` (they stage zeros).
struct BlockInput {
  bool present;
  std::int64_t source;
};
__device__ __forceinline__ BlockInput block_input(const HalfStage& in, int k0, int count) {
  BlockInput input{in.lane < count, k0 + in.lane};
  if (input.present && in.perm != nullptr) input.source = __ldg(in.perm + input.source);
  return input;
}
// Row r's input for this lane, and the largest magnitude among the warp's.
__device__ __forceinline__ float row_input(const HalfStage& in, const BlockInput& input, int r) {
  return input.present ? __ldg(in.x + r * in.x_stride + input.source) : 0.0f;
}
__device__ __forceinline__ float warp_largest(float value) {
  float largest = fabsf(value);
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2)
    largest = fmaxf(largest, __shfl_xor_sync(kFullMask, largest, offset));
  return largest;
}

// Lane j fetches input k0 + j of each row (through the permutation), and the
// warp finds each row's largest magnitude; lane j stores its input times the
// row's factor at the slot of value j for `bits`-wide weights. Lanes past
// `count` stage zeros, which cancel whatever the absent words unpack to.
// in.inverse[r] receives 1 / factor (a power of two, exact); shared memory
// rather than registers, which the many-row products need for their sums.
template <int Rows>
__device__ __forceinline__ void stage_half_inputs(const HalfStage& in, int k0, int count,
                                                  int bits) {
  const BlockInput input = block_input(in, k0, count);
  const int slot = half2_unpack::value_slot(bits, in.lane);
#pragma unroll
  for (int r = 0; r < Rows; ++r) {
    const float value = row_input(in, input, r);
    const float largest = warp_largest(value);
    const float factor = __uint_as_float(half2_unpack::block_input_scale(__float_as_uint(largest)));
    in.staged[r * 32 + slot] = half2_unpack::staged_input<DeviceHalf2Ops>(value, factor);
    if (in.lane == 0) in.inverse[r] = __frcp_rn(factor);
  }
  __syncwarp();
}

// Pairs [first, first + Count) of a row's staged block, 16 bytes at a time
// where Count allows.
template <int Count>
__device__ __forceinline__ void load_staged_pairs(const std::uint16_t* row, int first,
                                                  std::uint32_t (&pairs)[Count]) {
  const auto* words = reinterpret_cast<const std::uint32_t*>(row) + first;
  if constexpr (Count % 4 == 0) {
#pragma unroll
    for (int i = 0; i < Count; i += 4) {
      const uint4 quad = *reinterpret_cast<const uint4*>(words + i);
      pairs[i] = quad.x;
      pairs[i + 1] = quad.y;
      pairs[i + 2] = quad.z;
      pairs[i + 3] = quad.w;
    }
  } else {
    const uint2 two = *reinterpret_cast<const uint2*>(words);
    pairs[0] = two.x;
    pairs[1] = two.y;
  }
}

// sums[r][c] += scale[c] * the sum over the block's values j of x[r][j] *
// (q_j - zero[c]) for each of the lane's `Cols` columns, from their `Bits`
// words each and the warp's staged inputs: the block's half2 sum, its two
// lanes added in FP32, times the scale and the row's inverse factor (exact:
// a power of two). The words unpack one at a time (a whole block for 3, 5
// and 6 bits), each unit's pairs multiplied into every row before the next
// unit's unpack; a row's staged pairs are read once for all columns.
template <int Bits, int Rows, int Cols>
__device__ __forceinline__ void multiply_block_half2(const std::uint32_t (&words)[Cols][Bits],
                                                     const half2_unpack::Centering (&c)[Cols],
                                                     const HalfStage& in,
                                                     const float (&scale)[Cols],
                                                     float (&sums)[Rows][Cols]) {
  namespace unpack = half2_unpack;
  constexpr int kUnits = Bits / unpack::kUnitWords<Bits>;
  constexpr int kPairs = unpack::kUnitPairs<Bits>;
  std::uint32_t block[Rows][Cols];
#pragma unroll
  for (int r = 0; r < Rows; ++r) {
#pragma unroll
    for (int col = 0; col < Cols; ++col)
      block[r][col] = 0u;  // half2(+0, +0)
  }
#pragma unroll
  for (int u = 0; u < kUnits; ++u) {
    std::uint32_t weights[Cols][kPairs];
#pragma unroll
    for (int col = 0; col < Cols; ++col) {
      if constexpr (Bits == 4) {
        unpack::unpack_word4<DeviceHalf2Ops>(words[col][u], c[col], weights[col]);
      } else if constexpr (Bits == 2) {
        unpack::unpack_word2<DeviceHalf2Ops>(words[col][u], c[col], weights[col]);
      } else if constexpr (Bits == 8) {
        unpack::unpack_word8<DeviceHalf2Ops>(words[col][u], c[col], weights[col]);
      } else {
        unpack::unpack_block<Bits, DeviceHalf2Ops>(words[col], c[col], weights[col]);
      }
    }
#pragma unroll
    for (int r = 0; r < Rows; ++r) {
      std::uint32_t inputs[kPairs];
      load_staged_pairs<kPairs>(in.staged + r * 32, u * kPairs, inputs);
#pragma unroll
      for (int col = 0; col < Cols; ++col)
        block[r][col] =
            unpack::dot_pairs<kPairs, DeviceHalf2Ops>(inputs, weights[col], block[r][col]);
    }
  }
#pragma unroll
  for (int r = 0; r < Rows; ++r) {
    const float inverse = in.inverse[r];
#pragma unroll
    for (int col = 0; col < Cols; ++col) {
      const float2 lanes = __half22float2(DeviceHalf2Ops::as_pair(block[r][col]));
      sums[r][col] =
          __fmaf_rn(__fadd_rn(lanes.x, lanes.y), __fmul_rn(scale[col], inverse), sums[r][col]);
    }
  }
}

// The words of a 32-value block for the lane's `Cols` adjacent columns
// (word i of column n + col at words_at + i * columns + col), those that
// exist; four columns are one 16-byte load per word row (the caller checks
// the alignment), streamed past the caches with an evict-first hint: each
// weight is read once per product, and the caches are better kept for the
// inputs, scales and partial sums.
template <int Bits, int Cols>
__device__ __forceinline__ void load_block_columns(const std::uint32_t* words_at,
                                                   std::int64_t columns, int count, bool active,
                                                   std::uint32_t (&words)[Cols][Bits]) {
  static_assert(Cols == 1 || Cols == 4, "one column, or four in one 16-byte load");
  if constexpr (Cols == 1) {
    load_block<Bits>(words_at, columns, count, active, words[0]);
  } else {
    const int present = count * Bits / 32;
#pragma unroll
    for (int i = 0; i < Bits; ++i) {
      const uint4 four = (active && i < present)
                             ? __ldcs(reinterpret_cast<const uint4*>(words_at + i * columns))
                             : make_uint4(0u, 0u, 0u, 0u);
      words[0][i] = four.x;
      words[1][i] = four.y;
      words[2][i] = four.z;
      words[3][i] = four.w;
    }
  }
}

// The per-lane sums of a block's warps for the lane's `Cols` adjacent
// columns (lane l holds columns n0 + l * Cols + col of the block's tile of
// 32 * Cols), added in warp order and stored, then the split tile finished:
// reduce_warps_and_store for several columns per lane.
template <int Rows, int Cols>
__device__ __forceinline__ void reduce_warps_and_store_columns(const float (&sums)[Rows][Cols],
                                                               const Epilogue& e, int split,
                                                               std::int64_t n0) {
  constexpr int kTile = 32 * Cols;
  __shared__ float shared[kWarps][Rows][kTile];
  const int lane = static_cast<int>(threadIdx.x & 31u);
  const int warp = static_cast<int>(threadIdx.x >> 5);
#pragma unroll
  for (int r = 0; r < Rows; ++r) {
#pragma unroll
    for (int col = 0; col < Cols; ++col)
      shared[warp][r][lane * Cols + col] = sums[r][col];
  }
  __syncthreads();
  for (int i = static_cast<int>(threadIdx.x); i < Rows * kTile; i += kThreads) {
    const int r = i / kTile;
    const int j = i % kTile;
    if (n0 + j >= e.out_features) continue;
    float total = shared[0][r][j];
#pragma unroll
    for (int w = 1; w < kWarps; ++w)
      total = __fadd_rn(total, shared[w][r][j]);
    store(e, split, r, n0 + j, total);
  }
  finish_split_tile(e, n0, kTile);
}

}  // namespace quire::kernels::cuda::linear_detail
