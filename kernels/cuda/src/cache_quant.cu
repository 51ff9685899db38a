#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "cache_quant.cuh"
#include "quire/kernels/cuda/cache_quant.h"
#include "quire/kernels/cuda/cuda_error.h"

namespace quire::kernels::cuda {
namespace {

using cache_codec::kGroup;

// One warp per group.
template <int Bits>
__global__ void quantize_kernel(const float* __restrict__ values, std::size_t groups,
                                std::uint8_t* __restrict__ packed,
                                std::uint16_t* __restrict__ scales) {
  const std::size_t group = (blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x & 31);
  if (group >= groups) return;

  std::uint16_t scale = 0;
  const int level = cache_codec::quantize_lane<Bits>(values[group * kGroup + lane], lane, scale);
  if (lane == 0) scales[group] = scale;

  if constexpr (Bits == 8) {
    packed[group * kGroup + lane] = static_cast<std::uint8_t>(level);
  } else {
    const int upper = __shfl_down_sync(cache_codec::kFullMask, level, 1);
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

  int level;
  if constexpr (Bits == 8) {
    level = packed[group * kGroup + lane];
  } else {
    const std::uint8_t byte = packed[group * (kGroup / 2) + lane / 2];
    level = (lane & 1) ? (byte >> 4) : (byte & 0xf);
  }
  const float value =
      cache_codec::level_value<Bits>(level, cache_codec::level_step<Bits>(scales[group]));
  out[group * kGroup + lane] = cache_codec::hadamard32_warp(value, lane);
}

__global__ void encode_e4m3_kernel(const float* __restrict__ values, std::size_t count,
                                   float inverse, std::uint8_t* __restrict__ codes) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i >= count) return;
  codes[i] = cache_codec::encode_e4m3(__fmul_rn(values[i], inverse));
}

__global__ void decode_e4m3_kernel(const std::uint8_t* __restrict__ codes, std::size_t count,
                                   float scale, float* __restrict__ out) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i >= count) return;
  out[i] = __fmul_rn(cache_codec::decode_e4m3(codes[i]), scale);
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
