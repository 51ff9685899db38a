// The steps around the linear products: inputs gathered into aligned rows or
// converted for cuBLAS, how a product is split, and the bias and row scales
// applied to cuBLAS's outputs.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>

#include "linear_common.cuh"
#include "quire/kernels/cuda/cuda_error.h"

namespace quire::kernels::cuda {
namespace linear_detail {
namespace {

constexpr int kElementThreads = 256;
// Grid-stride kernels need no more than a few waves of blocks.
constexpr std::int64_t kMaxElementBlocks = 4096;
constexpr std::int64_t kMaxRowBlocks = 65535;

unsigned element_blocks(std::int64_t count) {
  return static_cast<unsigned>(
      std::min<std::int64_t>((count + kElementThreads - 1) / kElementThreads, kMaxElementBlocks));
}

__global__ void __launch_bounds__(kElementThreads)
    gather_kernel(const float* __restrict__ x, std::int64_t rows, std::int64_t in,
                  float* __restrict__ out, std::int64_t stride) {
  const std::int64_t count = rows * stride;
  const std::int64_t step = std::int64_t{gridDim.x} * blockDim.x;
  for (std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < count; i += step) {
    const std::int64_t r = i / stride, k = i % stride;
    float value = 0.0f;
    if (k < in) value = x[r * in + k];
    out[i] = value;
  }
}

__device__ float block_max(float value) {
  __shared__ float partial[kElementThreads / 32];
  const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
  for (int offset = 16; offset > 0; offset /= 2)
    value = fmaxf(value, __shfl_xor_sync(kFullMask, value, offset));
  if (lane == 0) partial[warp] = value;
  __syncthreads();
  float result = partial[0];
  for (int w = 1; w < kElementThreads / 32; ++w)
    result = fmaxf(result, partial[w]);
  // The next row reuses `partial`: everyone must have read it first.
  __syncthreads();
  return result;
}

__device__ unsigned short to_bits(float value, DType type) {
  if (type == DType::F16) return __half_as_ushort(__float2half_rn(value));
  return __bfloat16_as_ushort(__float2bfloat16_rn(value));
}

// One block per row (looping when there are more rows than blocks).
__global__ void __launch_bounds__(kElementThreads)
    convert_kernel(const float* __restrict__ x, std::int64_t rows, std::int64_t in,
                   const std::int32_t* __restrict__ perm, DType type,
                   unsigned short* __restrict__ out, std::int64_t stride,
                   float* __restrict__ row_scales) {
  for (std::int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* row = x + r * in;
    float largest = 0.0f;  // fmaxf ignores NaN, which then converts to NaN
    for (std::int64_t k = threadIdx.x; k < in; k += blockDim.x)
      largest = fmaxf(largest, fabsf(row[k]));
    largest = block_max(largest);
    // largest = m * 2^e with m in [0.5, 1): times 2^(15 - e) it lies in
    // [2^14, 2^15), below FP16's largest finite 65504. The exponent is
    // clamped so that neither power of two leaves FP32's normal range.
    float factor = 1.0f, inverse = 1.0f;
    if (largest > 0.0f && isfinite(largest)) {
      int exponent = 0;
      frexpf(largest, &exponent);
      exponent = max(exponent, -100);
      factor = ldexpf(1.0f, 15 - exponent);
      inverse = ldexpf(1.0f, exponent - 15);
    }
    for (std::int64_t k = threadIdx.x; k < stride; k += blockDim.x) {
      float value = 0.0f;
      if (k < in) value = __fmul_rn(row[perm != nullptr ? std::int64_t{perm[k]} : k], factor);
      out[r * stride + k] = to_bits(value, type);
    }
    if (threadIdx.x == 0) row_scales[r] = inverse;
  }
}

__global__ void __launch_bounds__(kElementThreads)
    finish_kernel(float* __restrict__ out, std::int64_t rows, std::int64_t out_features,
                  const float* __restrict__ row_scales, const float* __restrict__ column_scales,
                  const void* __restrict__ bias, DType bias_dtype) {
  const std::int64_t count = rows * out_features;
  const std::int64_t step = std::int64_t{gridDim.x} * blockDim.x;
  for (std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < count; i += step) {
    float value = out[i];
    if (row_scales != nullptr) value = __fmul_rn(value, row_scales[i / out_features]);
    if (column_scales != nullptr) value = __fmul_rn(value, column_scales[i % out_features]);
    if (bias != nullptr) value = __fadd_rn(value, widen(bias, bias_dtype, i % out_features));
    out[i] = value;
  }
}

}  // namespace

int matvec_splits(const MatvecCall& call, std::int64_t tiles, std::int64_t units) {
  const std::int64_t target = std::int64_t{call.sm_count} * kBlocksPerSm;
  // A split product counts its tiles' blocks in matvec_counter_capacity
  // counters, one per tile: so there must be fewer tiles than that.
  if (tiles >= target || units <= 1 || call.tile_counters == nullptr) return 1;
  std::int64_t splits = std::min((target + tiles - 1) / tiles, units);
  // With tiles < target, splits * N < 2 * target * kMaxBlockColumns, which is
  // what matvec_partial_capacity provides; the bound is kept here regardless.
  splits = std::min(splits, call.partial_capacity / (std::int64_t{call.rows} * call.out_features));
  splits = std::min<std::int64_t>(splits, 65535);  // gridDim.y
  return static_cast<int>(std::max<std::int64_t>(splits, 1));
}

}  // namespace linear_detail

using namespace linear_detail;

std::int64_t matvec_counter_capacity(int sm_count) {
  return std::int64_t{sm_count} * kBlocksPerSm;
}

std::int64_t matvec_partial_capacity(int sm_count) {
  return 2 * std::int64_t{sm_count} * kBlocksPerSm * kMaxBlockColumns * kMatvecMaxRows;
}

void launch_gather_inputs(const float* x, std::int64_t rows, std::int64_t in_features, float* out,
                          std::int64_t stride, Stream stream) {
  if (rows == 0 || stride == 0) return;
  gather_kernel<<<element_blocks(rows * stride), kElementThreads, 0,
                  static_cast<cudaStream_t>(stream)>>>(x, rows, in_features, out, stride);
  check(cudaGetLastError(), "linear: gather inputs");
}

void launch_convert_inputs(const float* x, std::int64_t rows, std::int64_t in_features,
                           const std::int32_t* perm, DType type, void* out, std::int64_t stride,
                           float* row_scales, Stream stream) {
  if (rows == 0) return;
  const auto blocks = static_cast<unsigned>(std::min(rows, kMaxRowBlocks));
  convert_kernel<<<blocks, kElementThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      x, rows, in_features, perm, type, static_cast<unsigned short*>(out), stride, row_scales);
  check(cudaGetLastError(), "linear: convert inputs");
}

void launch_finish_outputs(float* out, std::int64_t rows, std::int64_t out_features,
                           const float* row_scales, const float* column_scales, const void* bias,
                           DType bias_dtype, Stream stream) {
  if (rows == 0 || (row_scales == nullptr && column_scales == nullptr && bias == nullptr)) return;
  finish_kernel<<<element_blocks(rows * out_features), kElementThreads, 0,
                  static_cast<cudaStream_t>(stream)>>>(out, rows, out_features, row_scales,
                                                       column_scales, bias, bias_dtype);
  check(cudaGetLastError(), "linear: scale outputs and add bias");
}

}  // namespace quire::kernels::cuda
