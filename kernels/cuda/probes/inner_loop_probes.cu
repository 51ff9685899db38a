// Probes for the static count of instructions per weight
// (scripts/cuda_inner_loop.py): each kernel is one loop whose body is one
// step of a decode product's inner loop over N weights of one input row and
// one column, the name saying which (quire_probe_<format>_<variant>_<bits>
// bit_<N>w). The bodies call the products' own block functions, so the
// count follows the kernels; only the loop around them is the probe's. A lane
// of a real product does the same work per block, its staging of one input
// included. Not part of any build: the script compiles this file alone.

#include <cuda_runtime.h>

#include <cstdint>

#include "../src/exl2_blocks.cuh"
#include "../src/half2_block.cuh"
#include "../src/linear_common.cuh"

namespace {

using namespace quire::kernels::cuda::linear_detail;
namespace unpack = quire::kernels::half2_unpack;

// `blocks` 32-value blocks of one column, stored as the products store them
// (word i of block b at q + (b * Bits + i) * columns).
template <int Bits>
__device__ __forceinline__ void exl2_half2_loop(const std::uint32_t* __restrict__ q,
                                                std::int64_t columns, const float* __restrict__ x,
                                                int blocks, float* __restrict__ out) {
  __shared__ __align__(16) std::uint16_t staged[kWarps][32];
  __shared__ float inverse[kWarps][1];
  const int lane = static_cast<int>(threadIdx.x & 31u);
  const int warp = static_cast<int>(threadIdx.x >> 5);
  const HalfStage in{nullptr, x, 0, staged[warp], inverse[warp], lane};
  constexpr auto kCentering = unpack::centering(1u << (Bits - 1));
  float sums[1] = {};
#pragma unroll 1
  for (int b = 0; b < blocks; ++b) {
    std::uint32_t words[Bits];
    load_block<Bits>(q + std::int64_t{b} * Bits * columns + lane, columns, 32, true, words);
    stage_half_inputs<1>(in, b * 32, 32, Bits);
    multiply_block_half2<Bits, 1>(words, kCentering, in, 1.0f, sums);
    __syncwarp();
  }
  out[threadIdx.x] = sums[0];
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

#define QUIRE_PROBE(format, variant, bits)                                                        \
  extern "C" __global__ void __launch_bounds__(kThreads, 1)                                       \
      quire_probe_##format##_##variant##_##bits##bit_32w(                                         \
          const std::uint32_t* q, std::int64_t columns, const float* x, int blocks, float* out) { \
    format##_##variant##_loop<bits>(q, columns, x, blocks, out);                                  \
  }

QUIRE_PROBE(exl2, fp32, 4)
QUIRE_PROBE(exl2, fp32, 8)
QUIRE_PROBE(exl2, half2, 2)
QUIRE_PROBE(exl2, half2, 3)
QUIRE_PROBE(exl2, half2, 4)
QUIRE_PROBE(exl2, half2, 5)
QUIRE_PROBE(exl2, half2, 6)
QUIRE_PROBE(exl2, half2, 8)
