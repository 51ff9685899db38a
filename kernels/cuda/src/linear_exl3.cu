// EXL3 on CUDA, decode: y = H(H(x * suh) W^) * svh + bias (Exl3Weight) for
// at most kMatvecMaxRows rows, in two launches.
//
// 1. The input rotation, one warp per row and block of 128 inputs: x * suh,
//    the unnormalized Hadamard transform, a power of two that brings the
//    block's largest value to [2^14, 2^15), and each value split into an
//    FP16 high part and an FP16 low part (value - high). The pairs are
//    written as the A operand of the tensor cores' m16n8k16 product, one
//    16-byte fragment per lane and 16 inputs: input row r's high parts are
//    operand row r, its low parts row r + 8. So one product takes eight
//    rows at 22 significant bits, where FP16 alone would keep 11, and the
//    low parts cost no instruction of their own.
// 2. The product. A block computes 128 output columns (eight tiles) over a
//    share of the 128-input blocks (the split of the input dimension when
//    the columns are too few for the GPU). Each of its four warps takes four
//    tiles of columns and every other input block of the share; per 16
//    inputs it copies its four tiles' words and the A fragments into a ring
//    of shared memory (cp.async, several steps ahead), decodes its share of
//    each tile in registers (exl3_codebook.cuh) and runs two m16n8k16
//    products per tile, FP32 accumulation. After each block of 128 inputs
//    the high and low sums are added and scaled back by the block's power
//    of two. The two warps of each column half are summed in warp order;
//    split blocks go through partial sums that the last block of the column
//    tile adds in split order (as linear_common.cuh's finish_split_tile),
//    and that block applies the output rotation, the factor 1/128 both
//    rotations leave, svh and the bias, dropping padded outputs.

#include <cuda_fp16.h>
#include <cuda_pipeline.h>
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

// Tiles of 16 columns per warp, and per block (its column tile).
constexpr int kWarpTiles = 4;
constexpr int kBlockTiles = 8;
constexpr int kBlockColumns = kBlockTiles * kTileSide;  // one output rotation
static_assert(kBlockColumns == kHadamardSize, "a block's columns are one rotation block");
// Warps per column half: they take alternate 128-input blocks.
constexpr int kInputGroups = kWarps * kWarpTiles / kBlockTiles;
// 16-input steps per rotation block.
constexpr int kStepsPerBlock = kHadamardSize / kTileSide;
// 32-bit words of one step's A fragments (a uint4 per lane).
constexpr int kFragmentWords = 32 * 4;

// Steps each warp keeps in flight: deeper rings where a step holds few bytes.
template <int Bits>
constexpr int kStages = Bits <= 2 ? 8 : 4;
template <int Bits>
constexpr int kStageWords = kFragmentWords + kWarpTiles* tile_words(Bits);

// What the product kernel reads besides the epilogue.
struct Operands {
  const std::uint16_t* trellis;
  const std::uint16_t* svh;
  const uint4* fragments;   // [Kp / 16][32 lanes]
  const float* inv_scales;  // [Kp / 128][kMatvecMaxRows]
  std::int64_t tiles_n;     // Np / 16
  int input_blocks;         // Kp / 128
  bool aligned;             // trellis on a 16-byte boundary: cp.async in 16 bytes
};

// D += A B for one m16n8k16 step: A the four fragment registers, B two.
// Turing has no k16 shape; two k8 products give the same sums.
__device__ __forceinline__ void mma_16816(float (&d)[4], const uint4& a, std::uint32_t b0,
                                          std::uint32_t b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
  asm("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, "
      "{%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a.x), "r"(a.y), "r"(b0));
  asm("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, "
      "{%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a.z), "r"(a.w), "r"(b1));
#else
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a.x), "r"(a.y), "r"(a.z), "r"(a.w), "r"(b0), "r"(b1));
#endif
}

// Queues one step's copies into a stage of the warp's ring: the A fragments
// (zeros for the lanes of rows past the product's) and the words of four
// tiles side by side. An unaligned trellis is copied by 16-bit words,
// synchronously.
template <int Bits>
__device__ __forceinline__ void queue_step(const Operands& p, std::int64_t k_tile,
                                           std::int64_t first_tile, int rows, int lane,
                                           std::uint32_t* stage) {
  constexpr int kChunkWords = kWarpTiles * tile_words(Bits);
  const bool present = lane / 4 < rows;
  __pipeline_memcpy_async(stage + 4 * lane, p.fragments + k_tile * 32 + lane, 16, present ? 0 : 16);
  const std::uint16_t* source =
      p.trellis + (k_tile * p.tiles_n + first_tile) * (2 * tile_words(Bits));
  std::uint32_t* words = stage + kFragmentWords;
  if (p.aligned) {
    constexpr int kChunks = kChunkWords / 4;  // of 16 bytes
#pragma unroll
    for (int i = 0; i < (kChunks + 31) / 32; ++i) {
      const int c = lane + 32 * i;
      if (c < kChunks) __pipeline_memcpy_async(words + 4 * c, source + 8 * c, 16);
    }
  } else {
    auto* halves = reinterpret_cast<std::uint16_t*>(words);
    for (int h = lane; h < 2 * kChunkWords; h += 32)
      halves[h] = __ldg(source + h);
  }
}

// The block's 128 columns for every row, before the output rotation, in
// `sums` (rows x 128): its warps' sums added in warp order.
template <int Bits, Exl3Codebook Book>
__device__ __forceinline__ void block_sums(const Operands& p, int rows, int split, int splits,
                                           float (*sums)[kBlockColumns]) {
  constexpr int kTileWords = tile_words(Bits);
  constexpr int kStagesHere = kStages<Bits>;
  __shared__ __align__(16) std::uint32_t ring[kWarps][kStagesHere][kStageWords<Bits>];
  __shared__ float warp_sums[kInputGroups][kMatvecMaxRows][kBlockColumns];

  const int lane = static_cast<int>(threadIdx.x & 31u);
  const int warp = static_cast<int>(threadIdx.x >> 5);
  const int column_half = warp % 2;
  const int group = warp / 2;
  const int row = lane / 4;  // the input row whose sums this lane holds
  const std::int64_t first_tile = std::int64_t{blockIdx.x} * kBlockTiles + column_half * kWarpTiles;
  const int first_block = static_cast<int>(std::int64_t{p.input_blocks} * split / splits);
  const int last_block = static_cast<int>(std::int64_t{p.input_blocks} * (split + 1) / splits);
  // This warp's input blocks: first_block + group, then every kInputGroups-th.
  const int blocks = max(0, (last_block - first_block - group + kInputGroups - 1) / kInputGroups);
  const int steps = blocks * kStepsPerBlock;
  const auto k_tile_of = [&](int step) {
    const int block = first_block + group + kInputGroups * (step / kStepsPerBlock);
    return std::int64_t{block} * kStepsPerBlock + step % kStepsPerBlock;
  };
  const LaneWindow window = lane_window(Bits, lane);

#pragma unroll
  for (int s = 0; s < kStagesHere - 1; ++s) {
    if (s < steps) queue_step<Bits>(p, k_tile_of(s), first_tile, rows, lane, ring[warp][s]);
    __pipeline_commit();
  }
  float acc[kWarpTiles][2][2] = {};
  float d[kWarpTiles][2][4];
  float inv_scale = 0.0f;
  for (int step = 0; step < steps; ++step) {
    if (step % kStepsPerBlock == 0) {
#pragma unroll
      for (int t = 0; t < kWarpTiles; ++t) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
#pragma unroll
          for (int i = 0; i < 4; ++i)
            d[t][h][i] = 0.0f;
        }
      }
      const std::int64_t block = k_tile_of(step) / kStepsPerBlock;
      inv_scale = row < rows ? __ldg(p.inv_scales + block * kMatvecMaxRows + row) : 0.0f;
    }
    const int ahead = step + kStagesHere - 1;
    if (ahead < steps) {
      queue_step<Bits>(p, k_tile_of(ahead), first_tile, rows, lane,
                       ring[warp][ahead % kStagesHere]);
    }
    __pipeline_commit();
    __pipeline_wait_prior(kStagesHere - 1);
    __syncwarp();
    const std::uint32_t* stage = ring[warp][step % kStagesHere];
    const uint4 a = *reinterpret_cast<const uint4*>(stage + 4 * lane);
#pragma unroll
    for (int t = 0; t < kWarpTiles; ++t) {
      std::uint32_t b[4];
      decode_tile_fragment<Bits, Book>(stage + kFragmentWords + t * kTileWords, window, b);
      mma_16816(d[t][0], a, b[0], b[1]);
      mma_16816(d[t][1], a, b[2], b[3]);
    }
    // The stage is refilled on a later step only after every lane read it.
    __syncwarp();
    if (step % kStepsPerBlock == kStepsPerBlock - 1) {
      // Rows r and r + 8 of the product are row r's high and low parts.
#pragma unroll
      for (int t = 0; t < kWarpTiles; ++t) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          acc[t][h][0] = __fmaf_rn(__fadd_rn(d[t][h][0], d[t][h][2]), inv_scale, acc[t][h][0]);
          acc[t][h][1] = __fmaf_rn(__fadd_rn(d[t][h][1], d[t][h][3]), inv_scale, acc[t][h][1]);
        }
      }
    }
  }
  if (row < rows) {
    // Lane L holds columns 2 (L % 4) and + 1 of each 8-column half.
#pragma unroll
    for (int t = 0; t < kWarpTiles; ++t) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int column =
            column_half * kWarpTiles * kTileSide + t * kTileSide + h * 8 + 2 * (lane % 4);
        warp_sums[group][row][column] = acc[t][h][0];
        warp_sums[group][row][column + 1] = acc[t][h][1];
      }
    }
  }
  __syncthreads();
  for (int i = static_cast<int>(threadIdx.x); i < rows * kBlockColumns; i += kThreads) {
    const int r = i / kBlockColumns;
    const int c = i % kBlockColumns;
    float total = warp_sums[0][r][c];
#pragma unroll
    for (int g = 1; g < kInputGroups; ++g)
      total = __fadd_rn(total, warp_sums[g][r][c]);
    sums[r][c] = total;
  }
  __syncthreads();
}

// With several splits: this block's sums go to the partial sums, and the
// last block of the column tile to arrive (counted in tile_counters) reads
// them all back in split order into `sums`. Returns whether this block is
// that one (always, with one split).
__device__ __forceinline__ bool gather_splits(const Epilogue& e, std::int64_t padded_out, int split,
                                              float (*sums)[kBlockColumns]) {
  if (e.splits == 1) return true;
  const std::int64_t n0 = std::int64_t{blockIdx.x} * kBlockColumns;
  const std::int64_t split_stride = std::int64_t{e.rows} * padded_out;
  for (int i = static_cast<int>(threadIdx.x); i < e.rows * kBlockColumns; i += kThreads) {
    const int r = i / kBlockColumns;
    const int c = i % kBlockColumns;
    e.partials[split * split_stride + r * padded_out + n0 + c] = sums[r][c];
  }
  __shared__ bool last;
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) {
    last = atomicAdd(e.tile_counters + blockIdx.x, 1u) == static_cast<unsigned>(e.splits - 1);
  }
  __syncthreads();
  if (!last) return false;
  __threadfence();
  for (int i = static_cast<int>(threadIdx.x); i < e.rows * kBlockColumns; i += kThreads) {
    const int r = i / kBlockColumns;
    const std::int64_t at = r * padded_out + n0 + i % kBlockColumns;
    // Through L2: this multiprocessor's L1 is not coherent with other blocks' stores.
    float sum = __ldcg(e.partials + at);
    for (int s = 1; s < e.splits; ++s)
      sum = __fadd_rn(sum, __ldcg(e.partials + s * split_stride + at));
    sums[r][i % kBlockColumns] = sum;
  }
  if (threadIdx.x == 0) e.tile_counters[blockIdx.x] = 0;
  __syncthreads();
  return true;
}

// The output rotation of the block's 128 columns, one warp per row: times
// 1/128 (both rotations' scale), svh and the bias, the padded columns dropped.
__device__ __forceinline__ void rotate_outputs(const Epilogue& e, const std::uint16_t* svh,
                                               const float (*sums)[kBlockColumns]) {
  const int lane = static_cast<int>(threadIdx.x & 31u);
  const int warp = static_cast<int>(threadIdx.x >> 5);
  const std::int64_t n0 = std::int64_t{blockIdx.x} * kBlockColumns + 4 * lane;
  for (int r = warp; r < e.rows; r += kWarps) {
    float v[4];
#pragma unroll
    for (int j = 0; j < 4; ++j)
      v[j] = sums[r][4 * lane + j];
    hadamard128(v);
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const std::int64_t n = n0 + j;
      if (n >= e.out_features) continue;
      const float scale = __half2float(__ushort_as_half(__ldg(svh + n)));
      const float value = __fmul_rn(__fmul_rn(v[j], kHadamardSquaredScale), scale);
      e.out[r * e.out_features + n] = finish(e, n, value);
    }
  }
}

// Grid (Np / 128 column tiles, splits); four warps per block.
template <int Bits, Exl3Codebook Book>
__global__ void __launch_bounds__(kThreads) exl3_matvec_kernel(Operands p, Epilogue e) {
  __shared__ float sums[kMatvecMaxRows][kBlockColumns];
  const int split = static_cast<int>(blockIdx.y);
  block_sums<Bits, Book>(p, e.rows, split, e.splits, sums);
  if (!gather_splits(e, p.tiles_n * kTileSide, split, sums)) return;
  rotate_outputs(e, p.svh, sums);
}

// Grid (input blocks / kWarps, rows); each warp rotates one block of 128
// inputs of one row into fragments (see the top of this file).
__global__ void __launch_bounds__(kThreads)
    exl3_rotate_kernel(const float* __restrict__ x, std::int64_t x_stride, std::int64_t in,
                       const std::uint16_t* __restrict__ suh, int input_blocks,
                       uint2* __restrict__ fragments, float* __restrict__ inv_scales) {
  const int lane = static_cast<int>(threadIdx.x & 31u);
  const int block = static_cast<int>(blockIdx.x) * kWarps + static_cast<int>(threadIdx.x >> 5);
  if (block >= input_blocks) return;  // the whole warp
  const int r = static_cast<int>(blockIdx.y);
  float v[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const std::int64_t k = std::int64_t{block} * kHadamardSize + 4 * lane + j;
    v[j] = k < in ? __fmul_rn(__ldg(x + r * x_stride + k),
                              __half2float(__ushort_as_half(__ldg(suh + k))))
                  : 0.0f;
  }
  hadamard128(v);
  float inverse = 1.0f;
  const float factor = fp16_range_factor(warp_max_abs(v), inverse);
  if (lane == 0) inv_scales[block * kMatvecMaxRows + r] = inverse;
  // Lane L holds inputs 4 (L % 4) .. + 3 of the block's step L / 4: pairs
  // 2 (L % 2) and + 1 of the fragment lanes of row r, in the registers of
  // inputs 0..7 (L % 4 < 2) or 8..15.
  const std::int64_t k_tile = std::int64_t{block} * kStepsPerBlock + lane / 4;
  const int quarter = lane % 4;
  const int first_lane = r * 4 + 2 * (quarter % 2);
  const int register_pair = quarter < 2 ? 0 : 1;
#pragma unroll
  for (int p = 0; p < 2; ++p) {
    const float a = __fmul_rn(v[2 * p], factor);
    const float b = __fmul_rn(v[2 * p + 1], factor);
    const __half2 high = __floats2half2_rn(a, b);
    const __half2 low =
        __floats2half2_rn(__fsub_rn(a, __low2float(high)), __fsub_rn(b, __high2float(high)));
    fragments[(k_tile * 32 + first_lane + p) * 2 + register_pair] =
        make_uint2(half2_bits(high), half2_bits(low));
  }
}

template <int Bits, Exl3Codebook Book>
void launch_product(const Operands& p, dim3 grid, const Epilogue& e, cudaStream_t stream) {
  exl3_matvec_kernel<Bits, Book><<<grid, kThreads, 0, stream>>>(p, e);
}

template <Exl3Codebook Book>
void launch_codebook(int bits, const Operands& p, dim3 grid, const Epilogue& e,
                     cudaStream_t stream) {
  switch (bits) {
    case 1:
      return launch_product<1, Book>(p, grid, e, stream);
    case 2:
      return launch_product<2, Book>(p, grid, e, stream);
    case 3:
      return launch_product<3, Book>(p, grid, e, stream);
    case 4:
      return launch_product<4, Book>(p, grid, e, stream);
    case 5:
      return launch_product<5, Book>(p, grid, e, stream);
    case 6:
      return launch_product<6, Book>(p, grid, e, stream);
    case 7:
      return launch_product<7, Book>(p, grid, e, stream);
    default:
      return launch_product<8, Book>(p, grid, e, stream);
  }
}

}  // namespace

std::size_t exl3_rotated_bytes(std::int64_t padded_in) {
  const std::int64_t fragment_bytes = padded_in / kTileSide * kFragmentWords * 4;
  const std::int64_t scale_bytes = padded_in / kHadamardSize * kMatvecMaxRows * 4;
  return static_cast<std::size_t>(fragment_bytes + scale_bytes);
}

void launch_exl3_matvec(const MatvecCall& call, const Exl3Weight& weight, void* rotated,
                        Stream stream) {
  const auto cuda_stream = static_cast<cudaStream_t>(stream);
  const int input_blocks = static_cast<int>(weight.padded_in / kHadamardSize);
  auto* fragments = static_cast<uint4*>(rotated);
  auto* inv_scales = reinterpret_cast<float*>(fragments + weight.padded_in / kTileSide * 32);

  const dim3 rotate_grid(ceil_div(input_blocks, kWarps), static_cast<unsigned>(call.rows));
  exl3_rotate_kernel<<<rotate_grid, kThreads, 0, cuda_stream>>>(
      call.x, call.x_stride, call.in_features, weight.suh, input_blocks,
      reinterpret_cast<uint2*>(fragments), inv_scales);
  check(cudaGetLastError(), "linear: EXL3 input rotation");

  // Split sums are whole padded rows: the output rotation needs the padding.
  MatvecCall padded = call;
  padded.out_features = weight.padded_out;
  const std::int64_t tiles = weight.padded_out / kBlockColumns;
  const int splits = matvec_splits(padded, tiles, ceil_div(input_blocks, kInputGroups));
  const Operands operands{weight.trellis,
                          weight.svh,
                          fragments,
                          inv_scales,
                          weight.padded_out / kTileSide,
                          input_blocks,
                          reinterpret_cast<std::uintptr_t>(weight.trellis) % 16 == 0};
  const dim3 grid(static_cast<unsigned>(tiles), static_cast<unsigned>(splits));
  const Epilogue epilogue = make_epilogue(call, splits);
  switch (weight.codebook) {
    case Exl3Codebook::three_inst:
      launch_codebook<Exl3Codebook::three_inst>(weight.bits, operands, grid, epilogue, cuda_stream);
      break;
    case Exl3Codebook::mcg:
      launch_codebook<Exl3Codebook::mcg>(weight.bits, operands, grid, epilogue, cuda_stream);
      break;
    default:
      launch_codebook<Exl3Codebook::mul1>(weight.bits, operands, grid, epilogue, cuda_stream);
      break;
  }
  check(cudaGetLastError(), "linear: EXL3 product");
}

}  // namespace quire::kernels::cuda
