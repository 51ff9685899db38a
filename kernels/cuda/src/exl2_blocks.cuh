#pragma once

// What both EXL2 decode products (linear_exl2.cu in FP32, linear_exl2_half2.cu
// in half2) read the same way: the group table and the group scales with
// exllamav2's FP16 roundings; and the FP32 product's block step, which the
// static count of instructions per weight (kernels/cuda/probes) reads too.

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "linear_common.cuh"
#include "quire/kernels/cuda/half2_unpack.h"

namespace quire::kernels::cuda::linear_detail {

struct Group {
  int bits;
  int rows;
  int first_row;
  int q_row;
};

__device__ __forceinline__ Group load_group(const Exl2DeviceWeight& w, int g) {
  const int4 packed = __ldg(static_cast<const int4*>(w.groups) + g);
  return Group{packed.x, packed.y, packed.z, packed.w};
}

// The scale of group g at column n, with exllamav2's FP16 roundings. The
// multiplications are exact in FP32 (a power of two; at most 8 by 11
// significant bits), so only the two FP16 roundings shape the result.
__device__ __forceinline__ float group_scale(const Exl2DeviceWeight& w, int g, std::int64_t n) {
  const std::uint32_t word = __ldg(w.q_scale + g * (w.columns / 8) + n / 8);
  const int qs = static_cast<int>((word >> (4 * (n % 8))) & 15u) + 1;
  const float max_scale = __half2float(__ushort_as_half(__ldg(w.q_scale_max + g)));
  const float divided = __half2float(__float2half_rn(__fmul_rn(max_scale, 1.0f / 256.0f)));
  return __half2float(__float2half_rn(__fmul_rn(static_cast<float>(qs * qs), divided)));
}

// Where a warp's lane finds the product's inputs and stages a block's worth.
struct InputStage {
  const std::int32_t* perm;  // null: the identity
  const float* x;
  std::int64_t x_stride;
  float* staged;  // the warp's [Rows][32] floats of shared memory
  int lane;
};

// Lane j of the warp fetches input row k0 + j of each row r through the
// permutation into staged[r * 32 + j] (lanes past `count` fetch nothing).
template <int Rows>
__device__ __forceinline__ void stage_inputs(const InputStage& in, int k0, int count) {
  if (in.lane < count) {
    const int k = k0 + in.lane;
    const std::int64_t source = in.perm != nullptr ? __ldg(in.perm + k) : k;
#pragma unroll
    for (int r = 0; r < Rows; ++r)
      in.staged[r * 32 + in.lane] = __ldg(in.x + r * in.x_stride + source);
  }
  __syncwarp();
}

// acc[r] += sum_j x[r][k0 + j] * (q_j - 2^(Bits-1)) over the `count` values
// of one block (count is a multiple of 4: check_linear_weight allows no group
// whose rows are not). The block's weight words are requested first, so that
// staging its inputs (two dependent loads, mostly cache hits) overlaps the
// wait for memory.
template <int Bits, int Rows>
__device__ __forceinline__ void multiply_block(const std::uint32_t* words_at, std::int64_t columns,
                                               int count, bool active, const InputStage& in, int k0,
                                               float (&acc)[Rows]) {
  std::uint32_t words[Bits];
  load_block<Bits>(words_at, columns, count, active, words);
  stage_inputs<Rows>(in, k0, count);
  constexpr float kOffset = kMagic + static_cast<float>(1 << (Bits - 1));
#pragma unroll
  for (int j4 = 0; j4 < 32; j4 += 4) {
    if (j4 >= count) break;
    float inputs[Rows][4];
#pragma unroll
    for (int r = 0; r < Rows; ++r) {
      const float4 v = *reinterpret_cast<const float4*>(in.staged + r * 32 + j4);
      inputs[r][0] = v.x;
      inputs[r][1] = v.y;
      inputs[r][2] = v.z;
      inputs[r][3] = v.w;
    }
#pragma unroll
    for (int t = 0; t < 4; ++t) {
      const float q = centered(half2_unpack::straddling_value<Bits>(words, j4 + t), kOffset);
#pragma unroll
      for (int r = 0; r < Rows; ++r)
        acc[r] = __fmaf_rn(inputs[r][t], q, acc[r]);
    }
  }
  // Every lane has read the block's inputs before the next are staged.
  __syncwarp();
}

}  // namespace quire::kernels::cuda::linear_detail
