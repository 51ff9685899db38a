// EXL3 on CUDA, prefill: the steps around a cuBLAS product of rotated FP16
// inputs with W^ in FP16 (see launch_exl3_rotate_inputs in linear_ops.h).
// W^'s codebook values are FP16 numbers, so its copy is exact; only the
// inputs are rounded (to 11 significant bits, as every FP16 product's are),
// and both rotations stay in FP32.

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "exl3_codebook.cuh"
#include "hadamard128.cuh"
#include "linear_common.cuh"
#include "quire/kernels/cuda/cuda_error.h"

namespace quire::kernels::cuda {
namespace {

using namespace linear_detail;

constexpr int kRowWarps = 8;
constexpr int kRowThreads = kRowWarps * 32;
constexpr std::int64_t kMaxGridRows = 65535;
constexpr std::int64_t kMaxFinishBlocks = 4096;

// Lane L's four values of block `block` of a row: x * suh, zero past K, and
// rotated (unnormalized).
__device__ __forceinline__ void rotated_block(const float* row, std::int64_t in,
                                              const std::uint16_t* suh, int block, float (&v)[4]) {
  const int lane = static_cast<int>(threadIdx.x & 31u);
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const std::int64_t k = std::int64_t{block} * kHadamardSize + 4 * lane + j;
    v[j] = k < in ? __fmul_rn(row[k], __half2float(__ushort_as_half(__ldg(suh + k)))) : 0.0f;
  }
  hadamard128(v);
}

// One block per row (looping when there are more rows than blocks): the
// row's rotated blocks once for their largest value, then again to store
// them scaled, as FP16 (recomputing is cheaper than keeping a row of any
// length).
__global__ void __launch_bounds__(kRowThreads)
    exl3_rotate_rows_kernel(const float* __restrict__ x, std::int64_t rows, std::int64_t in,
                            const std::uint16_t* __restrict__ suh, int input_blocks,
                            __half2* __restrict__ out, float* __restrict__ row_scales) {
  __shared__ float warp_largest[kRowWarps];
  const int lane = static_cast<int>(threadIdx.x & 31u);
  const int warp = static_cast<int>(threadIdx.x >> 5);
  const std::int64_t padded = std::int64_t{input_blocks} * kHadamardSize;
  for (std::int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* row = x + r * in;
    float largest = 0.0f;
    for (int block = warp; block < input_blocks; block += kRowWarps) {
      float v[4];
      rotated_block(row, in, suh, block, v);
      largest =
          fmaxf(largest, fmaxf(fmaxf(fabsf(v[0]), fabsf(v[1])), fmaxf(fabsf(v[2]), fabsf(v[3]))));
    }
    for (int offset = 16; offset > 0; offset /= 2)
      largest = fmaxf(largest, __shfl_xor_sync(kFullMask, largest, offset));
    if (lane == 0) warp_largest[warp] = largest;
    __syncthreads();
    largest = warp_largest[0];
    for (int w = 1; w < kRowWarps; ++w)
      largest = fmaxf(largest, warp_largest[w]);
    // The next row reuses warp_largest: everyone must have read it first.
    __syncthreads();
    float inverse = 1.0f;
    const float factor = fp16_range_factor(largest, inverse);
    for (int block = warp; block < input_blocks; block += kRowWarps) {
      float v[4];
      rotated_block(row, in, suh, block, v);
      __half2* target = out + (r * padded + std::int64_t{block} * kHadamardSize) / 2 + 2 * lane;
      target[0] = __floats2half2_rn(__fmul_rn(v[0], factor), __fmul_rn(v[1], factor));
      target[1] = __floats2half2_rn(__fmul_rn(v[2], factor), __fmul_rn(v[3], factor));
    }
    if (threadIdx.x == 0) row_scales[r] = inverse;
  }
}

// Grid (column tiles / kWarps, input tiles): each warp decodes one tile into
// shared memory in the fragments' order and stores it row by row, a row's
// half (8 values, 16 bytes) per lane.
template <int Bits, Exl3Codebook Book>
__global__ void __launch_bounds__(kThreads)
    exl3_reconstruct_kernel(const std::uint16_t* __restrict__ trellis, std::int64_t tiles_n,
                            std::int64_t k_tiles, std::int64_t first_tile, std::int64_t tile_count,
                            __half* __restrict__ out, std::int64_t ld) {
  constexpr int kWords = tile_words(Bits);
  __shared__ std::uint32_t words[kWarps][kWords];
  __shared__ __align__(16) __half tile[kWarps][kTileSide][kTileSide];
  const int lane = static_cast<int>(threadIdx.x & 31u);
  const int warp = static_cast<int>(threadIdx.x >> 5);
  const std::int64_t index = std::int64_t{blockIdx.x} * kWarps + warp;
  if (index >= tile_count) return;  // the whole warp
  const LaneWindow window = lane_window(Bits, lane);
  const int row = lane / 2;
  const int column = (lane % 2) * 8;
  for (std::int64_t k_tile = blockIdx.y; k_tile < k_tiles; k_tile += gridDim.y) {
    // 16-bit reads: a trellis need not start on a 4-byte boundary.
    const std::uint16_t* source = trellis + (k_tile * tiles_n + first_tile + index) * (2 * kWords);
    for (int j = lane; j < kWords; j += 32) {
      words[warp][j] = static_cast<std::uint32_t>(__ldg(source + 2 * j)) |
                       static_cast<std::uint32_t>(__ldg(source + 2 * j + 1)) << 16;
    }
    __syncwarp();
    std::uint32_t b[4];
    decode_tile_fragment<Bits, Book>(words[warp], window, b);
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const __half2 pair = bits_half2(b[j / 2]);
      tile[warp][fragment_row(lane, j)][fragment_column(lane, j)] =
          j % 2 == 0 ? __low2half(pair) : __high2half(pair);
    }
    __syncwarp();
    *reinterpret_cast<uint4*>(out + (k_tile * kTileSide + row) * ld + index * kTileSide + column) =
        *reinterpret_cast<const uint4*>(&tile[warp][row][column]);
    // The next tile's words and values go where these were.
    __syncwarp();
  }
}

// Grid-stride over (row, block of 128 columns) pairs, one warp each.
__global__ void __launch_bounds__(kThreads)
    exl3_finish_kernel(const float* __restrict__ products, std::int64_t ld, std::int64_t rows,
                       const float* __restrict__ row_scales, const std::uint16_t* __restrict__ svh,
                       std::int64_t n0, std::int64_t blocks, float* __restrict__ out,
                       std::int64_t out_features, const void* __restrict__ bias, DType bias_dtype) {
  const int lane = static_cast<int>(threadIdx.x & 31u);
  const std::int64_t warps = std::int64_t{gridDim.x} * kWarps;
  for (std::int64_t w = std::int64_t{blockIdx.x} * kWarps + (threadIdx.x >> 5); w < rows * blocks;
       w += warps) {
    const std::int64_t r = w / blocks;
    const std::int64_t column = (w % blocks) * kHadamardSize + 4 * lane;
    const float4 q = *reinterpret_cast<const float4*>(products + r * ld + column);
    float v[4] = {q.x, q.y, q.z, q.w};
    hadamard128(v);
    // Two powers of two: exact.
    const float scale = __fmul_rn(row_scales[r], kHadamardSquaredScale);
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const std::int64_t n = n0 + column + j;
      if (n >= out_features) continue;
      float value =
          __fmul_rn(__fmul_rn(v[j], scale), __half2float(__ushort_as_half(__ldg(svh + n))));
      if (bias != nullptr) value = __fadd_rn(value, widen(bias, bias_dtype, n));
      out[r * out_features + n] = value;
    }
  }
}

template <int Bits, Exl3Codebook Book>
void reconstruct(const Exl3Weight& weight, std::int64_t first_tile, std::int64_t tile_count,
                 __half* out, std::int64_t ld, cudaStream_t stream) {
  const std::int64_t k_tiles = weight.padded_in / kTileSide;
  const dim3 grid(ceil_div(tile_count, kWarps),
                  static_cast<unsigned>(std::min(k_tiles, kMaxGridRows)));
  exl3_reconstruct_kernel<Bits, Book><<<grid, kThreads, 0, stream>>>(
      weight.trellis, weight.padded_out / kTileSide, k_tiles, first_tile, tile_count, out, ld);
}

template <Exl3Codebook Book>
void reconstruct_codebook(const Exl3Weight& weight, std::int64_t first_tile,
                          std::int64_t tile_count, __half* out, std::int64_t ld,
                          cudaStream_t stream) {
  switch (weight.bits) {
    case 1:
      return reconstruct<1, Book>(weight, first_tile, tile_count, out, ld, stream);
    case 2:
      return reconstruct<2, Book>(weight, first_tile, tile_count, out, ld, stream);
    case 3:
      return reconstruct<3, Book>(weight, first_tile, tile_count, out, ld, stream);
    case 4:
      return reconstruct<4, Book>(weight, first_tile, tile_count, out, ld, stream);
    case 5:
      return reconstruct<5, Book>(weight, first_tile, tile_count, out, ld, stream);
    case 6:
      return reconstruct<6, Book>(weight, first_tile, tile_count, out, ld, stream);
    case 7:
      return reconstruct<7, Book>(weight, first_tile, tile_count, out, ld, stream);
    default:
      return reconstruct<8, Book>(weight, first_tile, tile_count, out, ld, stream);
  }
}

}  // namespace

void launch_exl3_rotate_inputs(const float* x, std::int64_t rows, std::int64_t in_features,
                               const Exl3Weight& weight, void* out, float* row_scales,
                               Stream stream) {
  if (rows == 0) return;
  const auto blocks = static_cast<unsigned>(std::min(rows, kMaxGridRows));
  exl3_rotate_rows_kernel<<<blocks, kRowThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      x, rows, in_features, weight.suh, static_cast<int>(weight.padded_in / kHadamardSize),
      static_cast<__half2*>(out), row_scales);
  check(cudaGetLastError(), "linear: EXL3 input rotation");
}

void launch_exl3_reconstruct(const Exl3Weight& weight, std::int64_t n0, std::int64_t n1, void* w,
                             std::int64_t ld, Stream stream) {
  if (n1 <= n0) return;
  const auto cuda_stream = static_cast<cudaStream_t>(stream);
  const std::int64_t first_tile = n0 / kTileSide;
  const std::int64_t tile_count = (n1 - n0) / kTileSide;
  auto* out = static_cast<__half*>(w);
  switch (weight.codebook) {
    case Exl3Codebook::three_inst:
      reconstruct_codebook<Exl3Codebook::three_inst>(weight, first_tile, tile_count, out, ld,
                                                     cuda_stream);
      break;
    case Exl3Codebook::mcg:
      reconstruct_codebook<Exl3Codebook::mcg>(weight, first_tile, tile_count, out, ld, cuda_stream);
      break;
    default:
      reconstruct_codebook<Exl3Codebook::mul1>(weight, first_tile, tile_count, out, ld,
                                               cuda_stream);
      break;
  }
  check(cudaGetLastError(), "linear: reconstruct EXL3 weights");
}

void launch_exl3_finish_outputs(const float* products, std::int64_t ld, std::int64_t rows,
                                const float* row_scales, const Exl3Weight& weight, std::int64_t n0,
                                std::int64_t n1, float* out, std::int64_t out_features,
                                const void* bias, DType bias_dtype, Stream stream) {
  const std::int64_t blocks = (n1 - n0) / kHadamardSize;
  if (rows == 0 || blocks == 0) return;
  const auto grid = static_cast<unsigned>(
      std::min<std::int64_t>(ceil_div(rows * blocks, kWarps), kMaxFinishBlocks));
  exl3_finish_kernel<<<grid, kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      products, ld, rows, row_scales, weight.svh, n0, blocks, out, out_features, bias, bias_dtype);
  check(cudaGetLastError(), "linear: EXL3 output rotation");
}

}  // namespace quire::kernels::cuda
