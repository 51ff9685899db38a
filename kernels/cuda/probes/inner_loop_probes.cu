// Probes for the static count of instructions per weight
// (scripts/cuda_inner_loop.py): each kernel is one loop whose body is one
// step of a decode product's inner loop over N weights of one input row
// (one column, or half2x4's and dp4a's four), the name saying which
// (quire_probe_<format>_<variant>_<bits> bit_<N>w). The bodies call the products' own block
// functions, so the count follows the kernels; only the loop around them is the probe's. A lane of
// a real product does the same work per block, its staging of one input included. Not part of any
// build: the script compiles this file alone.

#include <cuda_runtime.h>

#include <cstdint>

#include "../src/dp4a_block.cuh"
#include "../src/exl2_blocks.cuh"
#include "../src/half2_block.cuh"
#include "../src/linear_common.cuh"

namespace {

using namespace quire::kernels::cuda::linear_detail;
namespace unpack = quire::kernels::half2_unpack;

// `blocks` 32-value blocks of `Cols` adjacent columns, stored as the
// products store them (word i of block b at q + (b * Bits + i) * columns).
template <int Bits, int Cols>
__device__ __forceinline__ void exl2_half2_columns_loop(const std::uint32_t* __restrict__ q,
                                                        std::int64_t columns,
                                                        const float* __restrict__ x, int blocks,
                                                        float* __restrict__ out) {
  __shared__ __align__(16) std::uint16_t staged[kWarps][32];
  __shared__ float inverse[kWarps][1];
  const int lane = static_cast<int>(threadIdx.x & 31u);
  const int warp = static_cast<int>(threadIdx.x >> 5);
  const HalfStage in{nullptr, x, 0, staged[warp], inverse[warp], lane};
  unpack::Centering centering[Cols];
  float scale[Cols];
  for (int col = 0; col < Cols; ++col) {
    centering[col] = unpack::centering(1u << (Bits - 1));
    scale[col] = 1.0f;
  }
  float sums[1][Cols] = {};
#pragma unroll 1
  for (int b = 0; b < blocks; ++b) {
    std::uint32_t words[Cols][Bits];
    load_block_columns<Bits, Cols>(q + std::int64_t{b} * Bits * columns + lane * Cols, columns, 32,
                                   true, words);
    stage_half_inputs<1>(in, b * 32, 32, Bits);
    multiply_block_half2<Bits, 1, Cols>(words, centering, in, scale, sums);
    __syncwarp();
  }
  for (int col = 0; col < Cols; ++col)
    out[threadIdx.x * Cols + col] = sums[0][col];
}

// The same with the dp4a step (2, 4 and 8 bits).
template <int Bits, int Cols>
__device__ __forceinline__ void exl2_dp4a_columns_loop(const std::uint32_t* __restrict__ q,
                                                       std::int64_t columns,
                                                       const float* __restrict__ x, int blocks,
                                                       float* __restrict__ out) {
  __shared__ __align__(16) std::uint32_t codes[kWarps][8];
  __shared__ float steps[kWarps][1];
  __shared__ std::int32_t code_sums[kWarps][1];
  const int lane = static_cast<int>(threadIdx.x & 31u);
  const int warp = static_cast<int>(threadIdx.x >> 5);
  const HalfStage in{nullptr, x, 0, nullptr, nullptr, lane};
  const ByteStage bytes{codes[warp], steps[warp], code_sums[warp]};
  float scale[Cols];
  std::int32_t zero[Cols];
  for (int col = 0; col < Cols; ++col) {
    scale[col] = 1.0f;
    zero[col] = 1 << (Bits - 1);
  }
  float sums[1][Cols] = {};
#pragma unroll 1
  for (int b = 0; b < blocks; ++b) {
    std::uint32_t words[Cols][Bits];
    load_block_columns<Bits, Cols>(q + std::int64_t{b} * Bits * columns + lane * Cols, columns, 32,
                                   true, words);
    stage_byte_inputs<1>(in, bytes, b * 32, 32, Bits);
    multiply_block_dp4a<Bits, 1, Cols>(words, zero, bytes, scale, sums);
    __syncwarp();
  }
  for (int col = 0; col < Cols; ++col)
    out[threadIdx.x * Cols + col] = sums[0][col];
}

template <int Bits>
__device__ __forceinline__ void exl2_dp4a_loop(const std::uint32_t* q, std::int64_t columns,
                                               const float* x, int blocks, float* out) {
  exl2_dp4a_columns_loop<Bits, 4>(q, columns, x, blocks, out);
}

template <int Bits>
__device__ __forceinline__ void exl2_half2_loop(const std::uint32_t* q, std::int64_t columns,
                                                const float* x, int blocks, float* out) {
  exl2_half2_columns_loop<Bits, 1>(q, columns, x, blocks, out);
}

template <int Bits>
__device__ __forceinline__ void exl2_half2x4_loop(const std::uint32_t* q, std::int64_t columns,
                                                  const float* x, int blocks, float* out) {
  exl2_half2_columns_loop<Bits, 4>(q, columns, x, blocks, out);
}

template <int Bits>
__device__ __forceinline__ void exl2_fp32_loop(const std::uint32_t* __restrict__ q,
                                               std::int64_t columns, const float* __restrict__ x,
                                               int blocks, float* __restrict__ out) {
  __shared__ __align__(16) float staged[kWarps][32];
  const int lane = static_cast<int>(threadIdx.x & 31u);
  const int warp = static_cast<int>(threadIdx.x >> 5);
  const InputStage in{nullptr, x, 0, staged[warp], lane};
  float acc[1] = {};
#pragma unroll 1
  for (int b = 0; b < blocks; ++b) {
    multiply_block<Bits, 1>(q + std::int64_t{b} * Bits * columns + lane, columns, 32, true, in,
                            b * 32, acc);
  }
  out[threadIdx.x] = acc[0];
}

}  // namespace

#define QUIRE_PROBE(format, variant, bits, weights)                                               \
  extern "C" __global__ void __launch_bounds__(kThreads, 1)                                       \
      quire_probe_##format##_##variant##_##bits##bit_##weights##w(                                \
          const std::uint32_t* q, std::int64_t columns, const float* x, int blocks, float* out) { \
    format##_##variant##_loop<bits>(q, columns, x, blocks, out);                                  \
  }

QUIRE_PROBE(exl2, fp32, 4, 32)
QUIRE_PROBE(exl2, fp32, 8, 32)
QUIRE_PROBE(exl2, half2, 2, 32)
QUIRE_PROBE(exl2, half2, 3, 32)
QUIRE_PROBE(exl2, half2, 4, 32)
QUIRE_PROBE(exl2, half2, 5, 32)
QUIRE_PROBE(exl2, half2, 6, 32)
QUIRE_PROBE(exl2, half2, 8, 32)
QUIRE_PROBE(exl2, half2x4, 2, 128)
QUIRE_PROBE(exl2, half2x4, 4, 128)
QUIRE_PROBE(exl2, half2x4, 8, 128)
QUIRE_PROBE(exl2, dp4a, 2, 128)
QUIRE_PROBE(exl2, dp4a, 4, 128)
QUIRE_PROBE(exl2, dp4a, 8, 128)
