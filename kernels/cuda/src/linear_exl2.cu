// EXL2 on CUDA: a fused dequantizing product for a few input rows (decode),
// and FP16 dequantization of column ranges for cuBLAS (prefill).
//
// q_weight is read once, in storage order: group after group, each 32-row
// block of a group as `bits` consecutive word rows. Each lane owns one output
// column, so a warp's load of a word row is 32 consecutive 32-bit words. For
// each block the warp's lanes fetch its 32 inputs through the permutation
// (x[perm[k]] for quantized row k) into the warp's slice of shared memory,
// where every lane then reads them four at a time: no separate gather launch
// and no gathered copy of x. Scales follow exl2_scale.h (CPU) to the bit:
// fp16(qs^2 * fp16(q_scale_max / 256)).

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>

#include "exl2_blocks.cuh"
#include "linear_common.cuh"
#include "quire/kernels/cuda/cuda_error.h"
#include "quire/kernels/cuda/half2_unpack.h"

namespace quire::kernels::cuda {
namespace {

using namespace linear_detail;

// Grid (column tiles of 32, splits); four warps per block. Split s takes an
// even share of the groups, which its warps take in turn. Per group each lane
// sums x * (q - zero) like the CPU, then adds scale * sum.
// Explicitly one resident block at least: without it ptxas held the
// many-row shapes to fewer registers and spilled.
template <int Rows>
__global__ void __launch_bounds__(kThreads, 1)
    exl2_matvec_kernel(Exl2DeviceWeight w, const float* __restrict__ x, std::int64_t x_stride,
                       Epilogue e) {
  __shared__ __align__(16) float staged_inputs[kWarps][Rows * 32];
  const int lane = static_cast<int>(threadIdx.x & 31u);
  const int warp = static_cast<int>(threadIdx.x >> 5);
  const InputStage in{w.perm, x, x_stride, staged_inputs[warp], lane};
  const std::int64_t n = std::int64_t{blockIdx.x} * 32 + lane;
  const bool active = n < e.out_features;
  const int split = static_cast<int>(blockIdx.y);
  const int splits = static_cast<int>(gridDim.y);
  const auto first = static_cast<int>(std::int64_t{w.group_count} * split / splits);
  const auto last = static_cast<int>(std::int64_t{w.group_count} * (split + 1) / splits);
  float sums[Rows] = {};
  for (int g = first + warp; g < last; g += kWarps) {
    const Group group = load_group(w, g);
    const float scale = active ? group_scale(w, g, n) : 0.0f;
    float acc[Rows] = {};
    for (int j0 = 0; j0 < group.rows; j0 += 32) {
      const int count = min(32, group.rows - j0);
      const std::uint32_t* words =
          w.q_weight + (std::int64_t{group.q_row} + (j0 / 32) * group.bits) * w.columns + n;
      const int k0 = group.first_row + j0;
      switch (group.bits) {
        case 2:
          multiply_block<2, Rows>(words, w.columns, count, active, in, k0, acc);
          break;
        case 3:
          multiply_block<3, Rows>(words, w.columns, count, active, in, k0, acc);
          break;
        case 4:
          multiply_block<4, Rows>(words, w.columns, count, active, in, k0, acc);
          break;
        case 5:
          multiply_block<5, Rows>(words, w.columns, count, active, in, k0, acc);
          break;
        case 6:
          multiply_block<6, Rows>(words, w.columns, count, active, in, k0, acc);
          break;
        default:
          multiply_block<8, Rows>(words, w.columns, count, active, in, k0, acc);
          break;
      }
    }
#pragma unroll
    for (int r = 0; r < Rows; ++r)
      sums[r] = __fmaf_rn(scale, acc[r], sums[r]);
  }
  reduce_warps_and_store<Rows>(sums, e, split, n, active);
}

template <int Bits>
__device__ __forceinline__ void dequantize_block(const std::uint32_t* words_at,
                                                 std::int64_t columns, int count, float scale,
                                                 __half* out, std::int64_t ld) {
  std::uint32_t words[Bits];
  load_block<Bits>(words_at, columns, count, true, words);
  constexpr float kOffset = kMagic + static_cast<float>(1 << (Bits - 1));
#pragma unroll
  for (int j = 0; j < 32; ++j) {
    if (j >= count) break;
    out[j * ld] = __float2half_rn(
        __fmul_rn(centered(half2_unpack::straddling_value<Bits>(words, j), kOffset), scale));
  }
}

// Grid (column tiles of kThreads, groups): one thread per column; each block
// row of the grid takes groups blockIdx.y, blockIdx.y + gridDim.y, ...
__global__ void __launch_bounds__(kThreads)
    exl2_dequantize_kernel(Exl2DeviceWeight w, std::int64_t n0, std::int64_t n1,
                           __half* __restrict__ out, std::int64_t ld) {
  const std::int64_t n = n0 + std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (n >= n1) return;
  for (int g = static_cast<int>(blockIdx.y); g < w.group_count; g += static_cast<int>(gridDim.y)) {
    const Group group = load_group(w, g);
    const float scale = group_scale(w, g, n);
    for (int j0 = 0; j0 < group.rows; j0 += 32) {
      const int count = min(32, group.rows - j0);
      const std::uint32_t* words =
          w.q_weight + (std::int64_t{group.q_row} + (j0 / 32) * group.bits) * w.columns + n;
      __half* target = out + (std::int64_t{group.first_row} + j0) * ld + (n - n0);
      switch (group.bits) {
        case 2:
          dequantize_block<2>(words, w.columns, count, scale, target, ld);
          break;
        case 3:
          dequantize_block<3>(words, w.columns, count, scale, target, ld);
          break;
        case 4:
          dequantize_block<4>(words, w.columns, count, scale, target, ld);
          break;
        case 5:
          dequantize_block<5>(words, w.columns, count, scale, target, ld);
          break;
        case 6:
          dequantize_block<6>(words, w.columns, count, scale, target, ld);
          break;
        default:
          dequantize_block<8>(words, w.columns, count, scale, target, ld);
          break;
      }
    }
  }
}

template <int Rows>
void launch_rows(const MatvecCall& call, const Exl2DeviceWeight& weight, cudaStream_t stream) {
  const std::int64_t tiles = ceil_div(call.out_features, 32);
  const int splits = matvec_splits(call, tiles, ceil_div(weight.group_count, kWarps));
  const dim3 grid(static_cast<unsigned>(tiles), static_cast<unsigned>(splits));
  exl2_matvec_kernel<Rows>
      <<<grid, kThreads, 0, stream>>>(weight, call.x, call.x_stride, make_epilogue(call, splits));
  check(cudaGetLastError(), "linear: EXL2 product");
}

}  // namespace

void launch_exl2_matvec(const MatvecCall& call, const Exl2DeviceWeight& weight, Stream stream) {
  if (call.variant != LinearVariant::fp32) return launch_exl2_matvec_half2(call, weight, stream);
  const auto cuda_stream = static_cast<cudaStream_t>(stream);
  with_row_count(call.rows,
                 [&](auto rows) { launch_rows<decltype(rows)::value>(call, weight, cuda_stream); });
}

void launch_exl2_dequantize(const Exl2DeviceWeight& weight, std::int64_t n0, std::int64_t n1,
                            void* w, std::int64_t ld, Stream stream) {
  if (n1 <= n0 || weight.group_count == 0) return;
  const dim3 grid(ceil_div(n1 - n0, kThreads),
                  static_cast<unsigned>(std::min(weight.group_count, 65535)));
  exl2_dequantize_kernel<<<grid, kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      weight, n0, n1, static_cast<__half*>(w), ld);
  check(cudaGetLastError(), "linear: dequantize EXL2 weights");
}

}  // namespace quire::kernels::cuda
