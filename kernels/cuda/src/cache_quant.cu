#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <stdexcept>
#include <string>

#include "quire/kernels/cuda/cache_quant.h"
#include "quire/kernels/cuda/cuda_error.h"

namespace quire::kernels::cuda {
namespace {

constexpr int kGroup = 32;
constexpr float kInvSqrt32 = 0.17677669529663687f;
constexpr unsigned kFullMask = 0xffffffffu;

// Orthonormal 32-point Walsh-Hadamard transform across a warp: lane i holds
// element i. Same butterfly order and rounding as the CPU reference.
__device__ float hadamard32_warp(float value, int lane) {
#pragma unroll
  for (int distance = 1; distance < kGroup; distance *= 2) {
    const float partner = __shfl_xor_sync(kFullMask, value, distance);
    value = (lane & distance) ? __fsub_rn(partner, value) : __fadd_rn(value, partner);
  }
  return __fmul_rn(value, kInvSqrt32);
}

__device__ float warp_max(float value) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) {
    value = fmaxf(value, __shfl_xor_sync(kFullMask, value, offset));
  }
  return value;
}

// One warp per group.
template <int Bits>
__global__ void quantize_kernel(const float* __restrict__ values, std::size_t groups,
                                std::uint8_t* __restrict__ packed,
                                std::uint16_t* __restrict__ scales) {
  const std::size_t group = (blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x & 31);
  if (group >= groups) return;

  const float rotated = hadamard32_warp(values[group * kGroup + lane], lane);
  const float absmax = warp_max(fabsf(rotated));
  __half scale_half = __float2half_rn(absmax);
  if (__hgt(scale_half, __ushort_as_half(0x7bff))) scale_half = __ushort_as_half(0x7bff);
  const float scale = __half2float(scale_half);

  constexpr int kMiddle = 1 << (Bits - 1);
  constexpr int kTop = (1 << Bits) - 1;
  int level = kMiddle;
  if (scale != 0.0f) {
    const float factor = __fdiv_rn(static_cast<float>(kMiddle), scale);
    level = __float2int_rn(__fmul_rn(rotated, factor)) + kMiddle;
    level = min(max(level, 0), kTop);
  }
  if (lane == 0) scales[group] = scale == 0.0f ? 0 : __half_as_ushort(scale_half);

  if constexpr (Bits == 8) {
    packed[group * kGroup + lane] = static_cast<std::uint8_t>(level);
  } else {
    const int upper = __shfl_down_sync(kFullMask, level, 1);
    if ((lane & 1) == 0) {
      packed[group * (kGroup / 2) + lane / 2] = static_cast<std::uint8_t>(level | (upper << 4));
    }
  }
}

template <int Bits>
__global__ void dequantize_kernel(const std::uint8_t* __restrict__ packed,
                                  const std::uint16_t* __restrict__ scales, std::size_t groups,
                                  float* __restrict__ out) {
  const std::size_t group = (blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x & 31);
  if (group >= groups) return;

  constexpr int kMiddle = 1 << (Bits - 1);
  int level;
  if constexpr (Bits == 8) {
    level = packed[group * kGroup + lane];
  } else {
    const std::uint8_t byte = packed[group * (kGroup / 2) + lane / 2];
    level = (lane & 1) ? (byte >> 4) : (byte & 0xf);
  }
  const float step =
      __fdiv_rn(__half2float(__ushort_as_half(scales[group])), static_cast<float>(kMiddle));
  const float value = __fmul_rn(static_cast<float>(level - kMiddle), step);
  out[group * kGroup + lane] = hadamard32_warp(value, lane);
}

__global__ void encode_e4m3_kernel(const float* __restrict__ values, std::size_t count,
                                   float inverse, std::uint8_t* __restrict__ codes) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i >= count) return;
  codes[i] = __nv_cvt_float_to_fp8(__fmul_rn(values[i], inverse), __NV_SATFINITE, __NV_E4M3);
}

__global__ void decode_e4m3_kernel(const std::uint8_t* __restrict__ codes, std::size_t count,
                                   float scale, float* __restrict__ out) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i >= count) return;
  const __half_raw raw = __nv_cvt_fp8_to_halfraw(codes[i], __NV_E4M3);
  out[i] = __fmul_rn(__half2float(__half(raw)), scale);
}

constexpr int kThreads = 256;

unsigned blocks_for(std::size_t threads) {
  return static_cast<unsigned>((threads + kThreads - 1) / kThreads);
}

void check_bits(int bits) {
  if (bits != 4 && bits != 8) {
    throw std::invalid_argument("cache quantization supports 4 or 8 bits, not " +
                                std::to_string(bits));
  }
}

}  // namespace

void quantize_int(const float* values, std::size_t groups, int bits, std::uint8_t* packed,
                  std::uint16_t* scales, Stream stream) {
  check_bits(bits);
  if (groups == 0) return;
  auto cuda_stream = static_cast<cudaStream_t>(stream);
  if (bits == 8) {
    quantize_kernel<8>
        <<<blocks_for(groups * 32), kThreads, 0, cuda_stream>>>(values, groups, packed, scales);
  } else {
    quantize_kernel<4>
        <<<blocks_for(groups * 32), kThreads, 0, cuda_stream>>>(values, groups, packed, scales);
  }
  check(cudaGetLastError(), "quantize cache groups");
}

void dequantize_int(const std::uint8_t* packed, const std::uint16_t* scales, std::size_t groups,
                    int bits, float* out, Stream stream) {
  check_bits(bits);
  if (groups == 0) return;
  auto cuda_stream = static_cast<cudaStream_t>(stream);
  if (bits == 8) {
    dequantize_kernel<8>
        <<<blocks_for(groups * 32), kThreads, 0, cuda_stream>>>(packed, scales, groups, out);
  } else {
    dequantize_kernel<4>
        <<<blocks_for(groups * 32), kThreads, 0, cuda_stream>>>(packed, scales, groups, out);
  }
  check(cudaGetLastError(), "dequantize cache groups");
}

void encode_e4m3(const float* values, std::size_t count, float scale, std::uint8_t* codes,
                 Stream stream) {
  if (count == 0) return;
  const float inverse = scale > 0.0f ? 1.0f / scale : 0.0f;
  encode_e4m3_kernel<<<blocks_for(count), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      values, count, inverse, codes);
  check(cudaGetLastError(), "encode FP8 cache values");
}

void decode_e4m3(const std::uint8_t* codes, std::size_t count, float scale, float* out,
                 Stream stream) {
  if (count == 0) return;
  decode_e4m3_kernel<<<blocks_for(count), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      codes, count, scale, out);
  check(cudaGetLastError(), "decode FP8 cache values");
}

}  // namespace quire::kernels::cuda
