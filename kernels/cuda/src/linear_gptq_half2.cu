// GPTQ's decode product in half2 (QUIRE_CUDA_LINEAR=half2), 4 and 8 bits:
// the input dimension walked in 32-row blocks (4 or 8 word rows of qweight),
// each lane's words unpacked by half2_unpack.h's magic-number forms with its
// group's zero point folded into the subtrahend, multiplied in half2 against
// inputs staged in FP16 (half2_block.cuh), each block's sum times the group
// scale in FP32. It takes weights whose groups are whole blocks and follow
// the rows (no act-order g_idx); others keep the FP32 product.

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "gptq_zero_point.cuh"
#include "half2_block.cuh"
#include "linear_common.cuh"
#include "quire/kernels/cuda/cuda_error.h"

namespace quire::kernels::cuda {
namespace {

using namespace linear_detail;

constexpr int kBlockRows = half2_unpack::kBlockValues;

// Grid (column tiles of 32, splits); four warps per block. Split s takes an
// even share of the K / 32 blocks, which its warps take in turn.
// Explicitly one resident block at least: without it ptxas held these
// kernels to 80 registers and spilled the many-row ones.
template <int Bits, int Rows>
__global__ void __launch_bounds__(kThreads, 1)
    gptq_matvec_half2_kernel(GptqWeight w, int in_features, const float* __restrict__ x,
                             std::int64_t x_stride, Epilogue e) {
  constexpr int kPerWord = 32 / Bits;
  __shared__ __align__(16) std::uint16_t staged_inputs[kWarps][Rows * 32];
  __shared__ float inverse_factors[kWarps][Rows];
  const int lane = static_cast<int>(threadIdx.x & 31u);
  const int warp = static_cast<int>(threadIdx.x >> 5);
  const HalfStage in{nullptr, x, x_stride, staged_inputs[warp], inverse_factors[warp], lane};
  const std::int64_t columns = e.out_features;
  const std::int64_t n = std::int64_t{blockIdx.x} * 32 + lane;
  const bool active = n < columns;
  const int split = static_cast<int>(blockIdx.y);
  const int splits = static_cast<int>(gridDim.y);
  const int blocks = in_features / kBlockRows;
  const auto first = static_cast<int>(std::int64_t{blocks} * split / splits);
  const auto last = static_cast<int>(std::int64_t{blocks} * (split + 1) / splits);
  int group = -1;
  float scale[1] = {0.0f};
  half2_unpack::Centering centering{};
  float sums[Rows][1] = {};
  for (int b = first + warp; b < last; b += kWarps) {
    const int k0 = b * kBlockRows;
    std::uint32_t words[1][Bits];
    load_block<Bits>(w.qweight + std::int64_t{k0 / kPerWord} * columns + n, columns, kBlockRows,
                     active, words[0]);
    const int g = k0 / w.group_size;  // the same in every lane
    if (g != group) {
      group = g;
      if (active) {
        scale[0] = widen(w.scales, w.scale_dtype, g * columns + n);
        centering = half2_unpack::centering(gptq_zero_point<Bits>(w, columns, g, n));
      }
    }
    stage_half_inputs<Rows>(in, k0, kBlockRows, Bits);
    multiply_block_half2<Bits, Rows, 1>(words, centering, in, scale, sums);
    // Every lane has read the block's inputs before the next are staged.
    __syncwarp();
  }
  reduce_warps_and_store_columns<Rows, 1>(sums, e, split, n - lane);
}

template <int Bits, int Rows>
void launch_shape(const MatvecCall& call, const GptqWeight& weight, cudaStream_t stream) {
  const std::int64_t tiles = ceil_div(call.out_features, 32);
  const int splits = matvec_splits(call, tiles, ceil_div(call.in_features / kBlockRows, kWarps));
  const dim3 grid(static_cast<unsigned>(tiles), static_cast<unsigned>(splits));
  gptq_matvec_half2_kernel<Bits, Rows>
      <<<grid, kThreads, 0, stream>>>(weight, static_cast<int>(call.in_features), call.x,
                                      call.x_stride, make_epilogue(call, splits));
  check(cudaGetLastError(), "linear: GPTQ product (half2)");
}

template <int Bits>
void launch_bits(const MatvecCall& call, const GptqWeight& weight, cudaStream_t stream) {
  switch (call.rows) {
    case 1:
      return launch_shape<Bits, 1>(call, weight, stream);
    case 2:
      return launch_shape<Bits, 2>(call, weight, stream);
    case 3:
      return launch_shape<Bits, 3>(call, weight, stream);
    case 4:
      return launch_shape<Bits, 4>(call, weight, stream);
    case 5:
      return launch_shape<Bits, 5>(call, weight, stream);
    case 6:
      return launch_shape<Bits, 6>(call, weight, stream);
    case 7:
      return launch_shape<Bits, 7>(call, weight, stream);
    default:
      return launch_shape<Bits, 8>(call, weight, stream);
  }
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
