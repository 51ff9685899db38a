#pragma once

// The dp4a decode products' shared steps (QUIRE_CUDA_LINEAR=dp4a): a warp
// stages a 32-row block of inputs as 8-bit codes, each row scaled so that
// its largest magnitude in the block is 127 (as the CPU's AVX2 EXL2 products
// scale theirs), in the order the masked weight words hold their codes
// (dp4a_unpack.h's input_slot), with the block's code sum; then every lane
// multiplies its columns' 2-, 4- or 8-bit codes with dp4a, takes the zero
// point off through the code sum, and adds the exact integer total times the
// group scale and the row's step. The integer steps are dp4a_unpack.h's,
// which the CPU tests check (tests/kernels/half2).

#include <cuda_runtime.h>

#include <cstdint>

#include "half2_block.cuh"
#include "linear_common.cuh"
#include "quire/kernels/cuda/dp4a_unpack.h"

namespace quire::kernels::cuda::linear_detail {

// The warp's shared memory for staged 8-bit inputs.
struct ByteStage {
  std::uint32_t* codes;  // [Rows][8] words of four codes (16-byte aligned)
  float* steps;          // [Rows]: the input value of code 1 (largest / 127)
  std::int32_t* sums;    // [Rows]: the sum of the block's codes
};

// Lane j fetches input k0 + j of each row (through the permutation); the
// warp finds each row's largest magnitude and code sum; lane j stores its
// code at the input slot of value j for `bits`-wide weights. Lanes past
// `count` stage code 0.
template <int Rows>
__device__ __forceinline__ void stage_byte_inputs(const HalfStage& in, const ByteStage& out, int k0,
                                                  int count, int bits) {
  const BlockInput input = block_input(in, k0, count);
  const int slot = dp4a_unpack::input_slot(bits, in.lane);
#pragma unroll
  for (int r = 0; r < Rows; ++r) {
    const float value = row_input(in, input, r);
    const float largest = warp_largest(value);
    const std::int32_t code = dp4a_unpack::input_code(value, dp4a_unpack::input_factor(largest));
    std::int32_t sum = code;
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2)
      sum += __shfl_xor_sync(kFullMask, sum, offset);
    reinterpret_cast<std::int8_t*>(out.codes + r * 8)[slot] = static_cast<std::int8_t>(code);
    // An infinite input makes the step infinite, and a NaN (which the
    // maximum passes over and whose code is 0) makes it NaN, so that the
    // outputs say so as the FP32 product's would.
    const bool nan = __any_sync(kFullMask, value != value);
    if (in.lane == 0) {
      out.steps[r] = nan ? __int_as_float(0x7fffffff) : __fdiv_rn(largest, 127.0f);
      out.sums[r] = sum;
    }
  }
  __syncwarp();
}

// sums[r][c] += scale[c] * step[r] * (sum_j code_j q_j - zero[c] * sum_j code_j)
// for each of the lane's `Cols` columns, from their `Bits` words each.
template <int Bits, int Rows, int Cols>
__device__ __forceinline__ void multiply_block_dp4a(const std::uint32_t (&words)[Cols][Bits],
                                                    const std::int32_t (&zero)[Cols],
                                                    const ByteStage& in, const float (&scale)[Cols],
                                                    float (&sums)[Rows][Cols]) {
#pragma unroll
  for (int r = 0; r < Rows; ++r) {
    std::uint32_t codes[8];
    const uint4 low = *reinterpret_cast<const uint4*>(in.codes + r * 8);
    const uint4 high = *reinterpret_cast<const uint4*>(in.codes + r * 8 + 4);
    codes[0] = low.x;
    codes[1] = low.y;
    codes[2] = low.z;
    codes[3] = low.w;
    codes[4] = high.x;
    codes[5] = high.y;
    codes[6] = high.z;
    codes[7] = high.w;
    const std::int32_t code_sum = in.sums[r];
    const float step = in.steps[r];
#pragma unroll
    for (int col = 0; col < Cols; ++col) {
      const std::int32_t total =
          dp4a_unpack::block_dot<Bits>(words[col], codes) - zero[col] * code_sum;
      sums[r][col] =
          __fmaf_rn(static_cast<float>(total), __fmul_rn(scale[col], step), sums[r][col]);
    }
  }
}

}  // namespace quire::kernels::cuda::linear_detail
