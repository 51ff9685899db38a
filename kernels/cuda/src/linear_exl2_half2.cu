// EXL2's decode product in half2 (QUIRE_CUDA_LINEAR=half2 or half2x4): the
// layout and group walk of linear_exl2.cu, with each 32-value block's
// weights unpacked two at a time by half2_unpack.h's magic-number forms and
// multiplied in half2 against inputs staged in FP16 (half2_block.cuh). The
// price is FP16 rounding inside each block (the CPU tests in
// tests/kernels/half2 bound it at 17 * 2^-11 of the block's magnitude).
// half2 gives each lane one column, as the FP32 product does; half2x4 gives
// it four adjacent ones, read with one 16-byte load per word row, so that
// staging a block's inputs, the loads and the loop cost a quarter as much
// per weight (products of up to 4 rows, where the registers allow). dp4a
// does as half2x4 does, but multiplies the 2-, 4- and 8-bit groups' codes by
// 8-bit inputs with dp4a (dp4a_block.cuh); 3-, 5- and 6-bit groups keep
// half2.

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "dp4a_block.cuh"
#include "exl2_blocks.cuh"
#include "half2_block.cuh"
#include "linear_common.cuh"
#include "quire/kernels/cuda/cuda_error.h"

namespace quire::kernels::cuda {
namespace {

using namespace linear_detail;

// The rows a four-column product takes at most.
constexpr int kWideRows = 4;

// Where a warp stages its inputs: FP16 for the half2 step, 8-bit codes for
// the dp4a one.
struct Stages {
  HalfStage half;
  ByteStage bytes;
};

template <int Bits, int Rows, int Cols, bool kIntegers>
__device__ __forceinline__ void group_blocks(const Exl2DeviceWeight& w, const Group& group,
                                             const float (&scale)[Cols], std::int64_t n,
                                             bool active, const Stages& in,
                                             float (&sums)[Rows][Cols]) {
  constexpr bool kDp4a = kIntegers && dp4a_unpack::byte_width(Bits);
  // EXL2's zero point is the same in every column.
  half2_unpack::Centering centering[Cols];
  std::int32_t zero[Cols];
#pragma unroll
  for (int col = 0; col < Cols; ++col) {
    centering[col] = half2_unpack::centering(1u << (Bits - 1));
    zero[col] = 1 << (Bits - 1);
  }
  for (int j0 = 0; j0 < group.rows; j0 += 32) {
    const int count = min(32, group.rows - j0);
    std::uint32_t words[Cols][Bits];
    // The block's words are requested before its inputs are staged, so that
    // staging overlaps the wait for memory.
    load_block_columns<Bits, Cols>(
        w.q_weight + (std::int64_t{group.q_row} + (j0 / 32) * Bits) * w.columns + n, w.columns,
        count, active, words);
    if constexpr (kDp4a) {
      stage_byte_inputs<Rows>(in.half, in.bytes, group.first_row + j0, count, Bits);
      multiply_block_dp4a<Bits, Rows, Cols>(words, zero, in.bytes, scale, sums);
    } else {
      stage_half_inputs<Rows>(in.half, group.first_row + j0, count, Bits);
      multiply_block_half2<Bits, Rows, Cols>(words, centering, in.half, scale, sums);
    }
    // Every lane has read the block's inputs before the next are staged.
    __syncwarp();
  }
}

// Grid (column tiles of 32 * Cols, splits); four warps per block, which
// take the groups of their split in turn. Each block's sum of x * (q - zero)
// is added times the group's scale (the FP32 product adds up a group's
// blocks first). Explicitly one resident block at least: without it ptxas
// held these kernels to 80 registers and spilled the many-row ones.
template <int Rows, int Cols, bool kIntegers>
__global__ void __launch_bounds__(kThreads, 1)
    exl2_matvec_half2_kernel(Exl2DeviceWeight w, const float* __restrict__ x, std::int64_t x_stride,
                             Epilogue e) {
  __shared__ __align__(16) std::uint16_t staged_inputs[kWarps][Rows * 32];
  __shared__ float inverse_factors[kWarps][Rows];
  __shared__ __align__(16) std::uint32_t staged_codes[kWarps][kIntegers ? Rows * 8 : 4];
  __shared__ float code_steps[kWarps][Rows];
  __shared__ std::int32_t code_sums[kWarps][Rows];
  const int lane = static_cast<int>(threadIdx.x & 31u);
  const int warp = static_cast<int>(threadIdx.x >> 5);
  const Stages in{HalfStage{w.perm, x, x_stride, staged_inputs[warp], inverse_factors[warp], lane},
                  ByteStage{staged_codes[warp], code_steps[warp], code_sums[warp]}};
  const std::int64_t n0 = std::int64_t{blockIdx.x} * 32 * Cols;
  const std::int64_t n = n0 + lane * Cols;  // the lane's first column
  const bool active = n < e.out_features;
  const int split = static_cast<int>(blockIdx.y);
  const int splits = static_cast<int>(gridDim.y);
  const auto first = static_cast<int>(std::int64_t{w.group_count} * split / splits);
  const auto last = static_cast<int>(std::int64_t{w.group_count} * (split + 1) / splits);
  float sums[Rows][Cols] = {};
  for (int g = first + warp; g < last; g += kWarps) {
    const Group group = load_group(w, g);
    float scale[Cols];
#pragma unroll
    for (int col = 0; col < Cols; ++col)
      scale[col] = n + col < e.out_features ? group_scale(w, g, n + col) : 0.0f;
    switch (group.bits) {
      case 2:
        group_blocks<2, Rows, Cols, kIntegers>(w, group, scale, n, active, in, sums);
        break;
      case 3:
        group_blocks<3, Rows, Cols, kIntegers>(w, group, scale, n, active, in, sums);
        break;
      case 4:
        group_blocks<4, Rows, Cols, kIntegers>(w, group, scale, n, active, in, sums);
        break;
      case 5:
        group_blocks<5, Rows, Cols, kIntegers>(w, group, scale, n, active, in, sums);
        break;
      case 6:
        group_blocks<6, Rows, Cols, kIntegers>(w, group, scale, n, active, in, sums);
        break;
      default:
        group_blocks<8, Rows, Cols, kIntegers>(w, group, scale, n, active, in, sums);
        break;
    }
  }
  reduce_warps_and_store_columns<Rows, Cols>(sums, e, split, n0);
}

template <int Rows, int Cols, bool kIntegers>
void launch_shape(const MatvecCall& call, const Exl2DeviceWeight& weight, cudaStream_t stream) {
  const std::int64_t tiles = ceil_div(call.out_features, 32 * Cols);
  const int splits = matvec_splits(call, tiles, ceil_div(weight.group_count, kWarps));
  const dim3 grid(static_cast<unsigned>(tiles), static_cast<unsigned>(splits));
  exl2_matvec_half2_kernel<Rows, Cols, kIntegers>
      <<<grid, kThreads, 0, stream>>>(weight, call.x, call.x_stride, make_epilogue(call, splits));
  check(cudaGetLastError(), "linear: EXL2 product (half2)");
}

template <int Rows>
void launch_rows(const MatvecCall& call, const Exl2DeviceWeight& weight, cudaStream_t stream) {
  // Four columns a lane where every word row's columns lie in 16-byte units.
  const bool wide = call.variant != LinearVariant::half2 && Rows <= kWideRows &&
                    weight.columns % 4 == 0 &&
                    reinterpret_cast<std::uintptr_t>(weight.q_weight) % 16 == 0;
  if constexpr (Rows <= kWideRows) {
    if (wide && call.variant == LinearVariant::dp4a) {
      return launch_shape<Rows, 4, true>(call, weight, stream);
    }
    if (wide) return launch_shape<Rows, 4, false>(call, weight, stream);
  }
  if (call.variant == LinearVariant::dp4a) return launch_shape<Rows, 1, true>(call, weight, stream);
  launch_shape<Rows, 1, false>(call, weight, stream);
}

}  // namespace

void launch_exl2_matvec_half2(const MatvecCall& call, const Exl2DeviceWeight& weight,
                              Stream stream) {
  const auto cuda_stream = static_cast<cudaStream_t>(stream);
  with_row_count(call.rows,
                 [&](auto rows) { launch_rows<decltype(rows)::value>(call, weight, cuda_stream); });
}

}  // namespace quire::kernels::cuda
