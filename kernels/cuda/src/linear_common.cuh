#pragma once

// What the linear kernels (linear_*.cu) share: block shape, the split of the
// input dimension, the store of results (bias and partial sums), and exact
// integer-to-float decoding.

#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "linear_ops.h"

namespace quire::kernels::cuda::linear_detail {

// Matrix-vector blocks: four warps. The EXL2 and GPTQ kernels give each lane
// one output column, so a warp's load of a q_weight row is 32 consecutive
// words; the warps of a block take different input rows of the same columns.
inline constexpr int kWarps = 4;
inline constexpr int kThreads = kWarps * 32;
inline constexpr unsigned kFullMask = 0xffffffffu;
// Enough resident blocks per multiprocessor to keep loads in flight.
inline constexpr int kBlocksPerSm = 8;
// The most columns one matrix-vector block computes (EXL2 and GPTQ: 32).
inline constexpr int kMaxBlockColumns = 32;

// Where a kernel's sums go. With one split they are final: bias added, into
// out. Otherwise they are partial sums of split `split`, which the last block
// of the column tile to finish adds up (finish_split_tile).
struct Epilogue {
  float* out = nullptr;
  float* partials = nullptr;
  unsigned* tile_counters = nullptr;
  std::int64_t out_features = 0;
  const void* bias = nullptr;
  DType bias_dtype = DType::F32;
  const float* column_scales = nullptr;
  int rows = 0;
  int splits = 1;
};

inline Epilogue make_epilogue(const MatvecCall& call, int splits) {
  return Epilogue{call.out,           call.partials, call.tile_counters,
                  call.out_features,  call.bias,     call.bias_dtype,
                  call.column_scales, call.rows,     splits};
}

// How many parts the input dimension is split into: enough blocks for the
// GPU when `tiles` column tiles are too few, at most one per `units` of work
// (so that every warp has some), and within the partial-sum and counter
// capacities.
int matvec_splits(const MatvecCall& call, std::int64_t tiles, std::int64_t units);

// Element i of an FP16, BF16 or F32 vector, widened exactly.
__device__ __forceinline__ float widen(const void* data, DType type, std::int64_t i) {
  if (type == DType::F32) return static_cast<const float*>(data)[i];
  const unsigned short bits = static_cast<const unsigned short*>(data)[i];
  if (type == DType::F16) return __half2float(__ushort_as_half(bits));
  return __uint_as_float(static_cast<unsigned>(bits) << 16);
}

// A finished sum of column n as the CPU's store_outputs makes it: times the
// column's scale (FP8 weights), then one rounded addition of the bias.
__device__ __forceinline__ float finish(const Epilogue& e, std::int64_t n, float sum) {
  if (e.column_scales != nullptr) sum = __fmul_rn(sum, __ldg(e.column_scales + n));
  if (e.bias != nullptr) sum = __fadd_rn(sum, widen(e.bias, e.bias_dtype, n));
  return sum;
}

// E4M3 codes (FP8 weights) widened exactly: every E4M3 value is an FP16
// value. sm_89 and later convert a pair in one instruction; cuda_fp8.h
// emulates it on older GPUs. The NaN codes stay NaN, as on the CPU.
__device__ __forceinline__ float e4m3_value(unsigned char code) {
  return __half2float(__half(__nv_cvt_fp8_to_halfraw(code, __NV_E4M3)));
}
// Two codes of a little-endian pair: the lower byte is the first value.
__device__ __forceinline__ float2 e4m3_pair(unsigned short codes) {
  return __half22float2(__half2(__nv_cvt_fp8x2_to_halfraw2(codes, __NV_E4M3)));
}

__device__ __forceinline__ void store(const Epilogue& e, int split, int row, std::int64_t n,
                                      float value) {
  if (e.splits == 1) {
    value = finish(e, n, value);
    e.out[row * e.out_features + n] = value;
  } else {
    e.partials[(std::int64_t{split} * e.rows + row) * e.out_features + n] = value;
  }
}

// q - zero, exactly, for an unsigned q below 2^23: the float whose mantissa
// holds q is 2^23 + q, and `offset` is 2^23 + zero. One bitwise OR and one
// subtraction, where an integer conversion runs at a quarter of the rate.
inline constexpr float kMagic = 8388608.0f;  // 2^23
__device__ __forceinline__ float centered(std::uint32_t q, float offset) {
  return __fsub_rn(__uint_as_float(0x4B000000u | q), offset);
}

// Four consecutive floats, one 16-byte load (the caller guarantees alignment).
__device__ __forceinline__ void load4(const float* source, float* values) {
  const float4 v = __ldg(reinterpret_cast<const float4*>(source));
  values[0] = v.x;
  values[1] = v.y;
  values[2] = v.z;
  values[3] = v.w;
}

// Called by every thread of a block after its stores, with the block's
// column tile [n0, n0 + columns). With several splits, the tile's blocks
// count themselves, and the last to finish adds the tile's partial sums in
// split order (scale and bias last, as store does): the same bits a separate reduction
// launch gave, without the launch. It resets the counter for the next
// product, which the stream runs after this one.
__device__ __forceinline__ void finish_split_tile(const Epilogue& e, std::int64_t n0, int columns) {
  if (e.splits == 1) return;
  __shared__ bool last;
  // This thread's partial sums reach the device's memory before the block
  // is counted, so the last block reads them all.
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) {
    last = atomicAdd(e.tile_counters + blockIdx.x, 1u) == static_cast<unsigned>(e.splits - 1);
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  const std::int64_t split_stride = std::int64_t{e.rows} * e.out_features;
  for (int i = static_cast<int>(threadIdx.x); i < e.rows * columns;
       i += static_cast<int>(blockDim.x)) {
    const int r = i / columns;
    const std::int64_t n = n0 + i % columns;
    if (n >= e.out_features) continue;
    const std::int64_t at = r * e.out_features + n;
    // __ldcg reads through L2, past this multiprocessor's L1, which may hold
    // nothing of other blocks' stores but is not kept coherent with them.
    float sum = __ldcg(e.partials + at);
#pragma unroll 4
    for (int s = 1; s < e.splits; ++s)
      sum = __fadd_rn(sum, __ldcg(e.partials + s * split_stride + at));
    e.out[at] = finish(e, n, sum);
  }
  if (threadIdx.x == 0) e.tile_counters[blockIdx.x] = 0;
}

// The per-lane sums of a block's warps, added in warp order and stored for
// column n (lanes with active == false only take part in the barriers). Warp
// w stores rows w, w + kWarps, ... The block's tile is its 32 columns.
template <int Rows>
__device__ __forceinline__ void reduce_warps_and_store(const float (&sums)[Rows], const Epilogue& e,
                                                       int split, std::int64_t n, bool active) {
  __shared__ float shared[kWarps][Rows][32];
  const int lane = static_cast<int>(threadIdx.x & 31u);
  const int warp = static_cast<int>(threadIdx.x >> 5);
#pragma unroll
  for (int r = 0; r < Rows; ++r)
    shared[warp][r][lane] = sums[r];
  __syncthreads();
  if (active) {
    for (int r = warp; r < Rows; r += kWarps) {
      float total = shared[0][r][lane];
#pragma unroll
      for (int w = 1; w < kWarps; ++w)
        total = __fadd_rn(total, shared[w][r][lane]);
      store(e, split, r, n, total);
    }
  }
  finish_split_tile(e, n - lane, 32);
}

// The words of a 32-value block of `Bits`-wide codes stored down a column
// (word i at words_at + i * columns), those that exist: an EXL2 group's last
// block may hold fewer than 32 values (count * Bits / 32 words).
template <int Bits>
__device__ __forceinline__ void load_block(const std::uint32_t* words_at, std::int64_t columns,
                                           int count, bool active, std::uint32_t (&words)[Bits]) {
  const int present = count * Bits / 32;
#pragma unroll
  for (int i = 0; i < Bits; ++i)
    words[i] = (active && i < present) ? __ldg(words_at + i * columns) : 0u;
}

// f(std::integral_constant<int, R>{}) for R = rows, 1 to kMatvecMaxRows (8),
// so that each row count of the fused products has its own instantiation.
template <typename F>
void with_row_count(int rows, F&& f) {
  static_assert(kMatvecMaxRows == 8, "one case per row count");
  switch (rows) {
    case 1:
      return f(std::integral_constant<int, 1>{});
    case 2:
      return f(std::integral_constant<int, 2>{});
    case 3:
      return f(std::integral_constant<int, 3>{});
    case 4:
      return f(std::integral_constant<int, 4>{});
    case 5:
      return f(std::integral_constant<int, 5>{});
    case 6:
      return f(std::integral_constant<int, 6>{});
    case 7:
      return f(std::integral_constant<int, 7>{});
    default:
      return f(std::integral_constant<int, 8>{});
  }
}

inline unsigned ceil_div(std::int64_t a, std::int64_t b) {
  return static_cast<unsigned>((a + b - 1) / b);
}

}  // namespace quire::kernels::cuda::linear_detail
