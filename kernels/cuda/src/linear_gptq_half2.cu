// GPTQ's decode products in half2 and dp4a (QUIRE_CUDA_LINEAR), 4 and 8
// bits: the input dimension walked in 32-row blocks (4 or 8 word rows of
// qweight); half2 unpacks each lane's words by half2_unpack.h's magic-number
// forms with its group's zero point folded into the subtrahend and
// multiplies them in half2 against inputs staged in FP16 (half2_block.cuh);
// dp4a multiplies the codes by 8-bit inputs and takes the zero point off
// through the block's code sum (dp4a_block.cuh). Each block's sum is added
// times the group scale in FP32. half2 gives a lane one column; half2x4 and
// dp4a give it four adjacent ones (one 16-byte load per word row) in
// products of up to 4 rows. They take weights whose groups are whole blocks
// and follow the rows (no act-order g_idx); others keep the FP32 product.

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "dp4a_block.cuh"
#include "gptq_zero_point.cuh"
#include "half2_block.cuh"
#include "linear_common.cuh"
#include "quire/kernels/cuda/cuda_error.h"

namespace quire::kernels::cuda {
namespace {

using namespace linear_detail;

constexpr int kBlockRows = half2_unpack::kBlockValues;
// The rows a four-column product takes at most.
constexpr int kWideRows = 4;

// The scale and zero point of group g for the lane's columns.
template <int Bits, int Cols>
struct GroupColumns {
  int group = -1;
  float scale[Cols] = {};
  half2_unpack::Centering centering[Cols] = {};
  std::int32_t zero[Cols] = {};

  __device__ __forceinline__ void move(const GptqWeight& w, std::int64_t columns, int g,
                                       std::int64_t n) {
    if (g == group) return;
    group = g;
#pragma unroll
    for (int col = 0; col < Cols; ++col) {
      if (n + col >= columns) continue;
      scale[col] = widen(w.scales, w.scale_dtype, g * columns + n + col);
      const std::uint32_t z = gptq_zero_point<Bits>(w, columns, g, n + col);
      centering[col] = half2_unpack::centering(z);
      zero[col] = static_cast<std::int32_t>(z);
    }
  }
};

// Grid (column tiles of 32 * Cols, splits); four warps per block. Split s
// takes an even share of the K / 32 blocks, which its warps take in turn.
// Explicitly one resident block at least: without it ptxas held these
// kernels to 80 registers and spilled the many-row ones.
template <int Bits, int Rows, int Cols, bool kIntegers>
__global__ void __launch_bounds__(kThreads, 1)
    gptq_matvec_half2_kernel(GptqWeight w, int in_features, const float* __restrict__ x,
                             std::int64_t x_stride, Epilogue e) {
  constexpr int kPerWord = 32 / Bits;
  __shared__ __align__(16) std::uint16_t staged_inputs[kWarps][kIntegers ? 8 : Rows * 32];
  __shared__ float inverse_factors[kWarps][Rows];
  __shared__ __align__(16) std::uint32_t staged_codes[kWarps][kIntegers ? Rows * 8 : 4];
  __shared__ std::int32_t code_sums[kWarps][Rows];
  const int lane = static_cast<int>(threadIdx.x & 31u);
  const int warp = static_cast<int>(threadIdx.x >> 5);
  const HalfStage in{nullptr, x, x_stride, staged_inputs[warp], inverse_factors[warp], lane};
  const ByteStage bytes{staged_codes[warp], inverse_factors[warp], code_sums[warp]};
  const std::int64_t columns = e.out_features;
  const std::int64_t n0 = std::int64_t{blockIdx.x} * 32 * Cols;
  const std::int64_t n = n0 + lane * Cols;  // the lane's first column
  const bool active = n < columns;
  const int split = static_cast<int>(blockIdx.y);
  const int splits = static_cast<int>(gridDim.y);
  const int blocks = in_features / kBlockRows;
  const auto first = static_cast<int>(std::int64_t{blocks} * split / splits);
  const auto last = static_cast<int>(std::int64_t{blocks} * (split + 1) / splits);
  GroupColumns<Bits, Cols> group;
  float sums[Rows][Cols] = {};
  for (int b = first + warp; b < last; b += kWarps) {
    const int k0 = b * kBlockRows;
    std::uint32_t words[Cols][Bits];
    load_block_columns<Bits, Cols>(w.qweight + std::int64_t{k0 / kPerWord} * columns + n, columns,
                                   kBlockRows, active, words);
    if (active) group.move(w, columns, k0 / w.group_size, n);
    if constexpr (kIntegers) {
      stage_byte_inputs<Rows>(in, bytes, k0, kBlockRows, Bits);
      multiply_block_dp4a<Bits, Rows, Cols>(words, group.zero, bytes, group.scale, sums);
    } else {
      stage_half_inputs<Rows>(in, k0, kBlockRows, Bits);
      multiply_block_half2<Bits, Rows, Cols>(words, group.centering, in, group.scale, sums);
    }
    // Every lane has read the block's inputs before the next are staged.
    __syncwarp();
  }
  reduce_warps_and_store_columns<Rows, Cols>(sums, e, split, n0);
}

template <int Bits, int Rows, int Cols, bool kIntegers>
void launch_shape(const MatvecCall& call, const GptqWeight& weight, cudaStream_t stream) {
  const std::int64_t tiles = ceil_div(call.out_features, 32 * Cols);
  const int splits = matvec_splits(call, tiles, ceil_div(call.in_features / kBlockRows, kWarps));
  const dim3 grid(static_cast<unsigned>(tiles), static_cast<unsigned>(splits));
  gptq_matvec_half2_kernel<Bits, Rows, Cols, kIntegers>
      <<<grid, kThreads, 0, stream>>>(weight, static_cast<int>(call.in_features), call.x,
                                      call.x_stride, make_epilogue(call, splits));
  check(cudaGetLastError(), "linear: GPTQ product (half2 or dp4a)");
}

template <int Bits, int Rows>
void launch_variant(const MatvecCall& call, const GptqWeight& weight, cudaStream_t stream) {
  // Four columns a lane where every word row's columns lie in 16-byte units.
  const bool wide = call.variant != LinearVariant::half2 && Rows <= kWideRows &&
                    call.out_features % 4 == 0 &&
                    reinterpret_cast<std::uintptr_t>(weight.qweight) % 16 == 0;
  const bool integers = call.variant == LinearVariant::dp4a;
  if constexpr (Rows <= kWideRows) {
    if (wide && integers) return launch_shape<Bits, Rows, 4, true>(call, weight, stream);
    if (wide) return launch_shape<Bits, Rows, 4, false>(call, weight, stream);
  }
  if (integers) return launch_shape<Bits, Rows, 1, true>(call, weight, stream);
  launch_shape<Bits, Rows, 1, false>(call, weight, stream);
}

template <int Bits>
void launch_bits(const MatvecCall& call, const GptqWeight& weight, cudaStream_t stream) {
  with_row_count(call.rows, [&](auto rows) {
    launch_variant<Bits, decltype(rows)::value>(call, weight, stream);
  });
}

}  // namespace

bool gptq_half2_applies(const MatvecCall& call, const GptqWeight& weight) {
  return weight.g_idx == nullptr && weight.group_size > 0 && weight.group_size % kBlockRows == 0 &&
         call.in_features % kBlockRows == 0 && (weight.bits == 4 || weight.bits == 8);
}

void launch_gptq_matvec_half2(const MatvecCall& call, const GptqWeight& weight, Stream stream) {
  const auto cuda_stream = static_cast<cudaStream_t>(stream);
  if (weight.bits == 8) return launch_bits<8>(call, weight, cuda_stream);
  return launch_bits<4>(call, weight, cuda_stream);
}

}  // namespace quire::kernels::cuda
