#pragma once

// Device functions of the quantized cache codings, shared by the K/V writes
// (kv_write.cu) and paged attention, so that there is one GPU copy of each
// rounding rule; the GPU op tests check both against the CPU. Each
// matches the CPU reference (quire/kernels/cpu/cache_quant.h) bit for bit:
// every operation the CPU rounds is an explicitly rounded intrinsic here, so
// nvcc cannot contract a multiply and an add into an FMA the CPU does not do.

#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cstdint>

namespace quire::kernels::cuda::cache_codec {

constexpr int kGroup = 32;
constexpr float kInvSqrt32 = 0.17677669529663687f;
constexpr unsigned kFullMask = 0xffffffffu;
constexpr float kE4m3Max = 448.0f;

// Orthonormal 32-point Walsh-Hadamard transform across a warp: lane i holds
// element i. Same butterfly order and rounding as the CPU reference; every
// lane of the warp must take part.
__device__ inline float hadamard32_warp(float value, int lane) {
#pragma unroll
  for (int distance = 1; distance < kGroup; distance *= 2) {
    const float partner = __shfl_xor_sync(kFullMask, value, distance);
    value = (lane & distance) ? __fsub_rn(partner, value) : __fadd_rn(value, partner);
  }
  return __fmul_rn(value, kInvSqrt32);
}

__device__ inline float warp_max(float value) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) {
    value = fmaxf(value, __shfl_xor_sync(kFullMask, value, offset));
  }
  return value;
}

__device__ inline float warp_sum(float value) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) {
    value += __shfl_xor_sync(kFullMask, value, offset);
  }
  return value;
}

// One group of 32 values, lane i holding element i: returns lane i's level
// (0 .. 2^Bits - 1) and sets `scale_bits` (the same on every lane) to the FP16
// bits of the group's scale, 0 for a group that rounds to all zeros.
template <int Bits>
__device__ inline int quantize_lane(float value, int lane, std::uint16_t& scale_bits) {
  const float rotated = hadamard32_warp(value, lane);
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
  scale_bits = scale == 0.0f ? std::uint16_t{0} : __half_as_ushort(scale_half);
  return level;
}

// The distance between two levels of a group with FP16 scale `scale_bits`.
template <int Bits>
__device__ inline float level_step(std::uint16_t scale_bits) {
  return __fdiv_rn(__half2float(__ushort_as_half(scale_bits)), static_cast<float>(1 << (Bits - 1)));
}

// A level back to its value in the rotated domain (before the inverse
// rotation): (level - 2^(Bits-1)) * step, as the CPU computes it.
template <int Bits>
__device__ inline float level_value(int level, float step) {
  return __fmul_rn(static_cast<float>(level - (1 << (Bits - 1))), step);
}

// FP8 E4M3 ("FN", saturating), as quire/kernels/cpu/fp8.h encodes it.
__device__ inline std::uint8_t encode_e4m3(float value) {
  return static_cast<std::uint8_t>(__nv_cvt_float_to_fp8(value, __NV_SATFINITE, __NV_E4M3));
}

__device__ inline float decode_e4m3(std::uint8_t code) {
  const __half_raw raw = __nv_cvt_fp8_to_halfraw(code, __NV_E4M3);
  return __half2float(__half(raw));
}

// fp8_scale_for of the CPU reference: the smallest power of two s with
// absmax / s <= 448, or 0 when absmax is 0. The CPU refuses a non-finite
// absmax with an exception, which a kernel cannot throw; here it gets the
// scale of the largest float, so such values saturate to +-448 codes.
__device__ inline float fp8_scale_for(float absmax) {
  if (!(absmax > 0.0f)) return 0.0f;
  if (isinf(absmax)) absmax = 3.40282347e38f;
  int exponent = 0;
  const float mantissa = frexpf(__fdiv_rn(absmax, kE4m3Max), &exponent);
  float scale = mantissa == 0.5f ? ldexpf(1.0f, exponent - 1) : ldexpf(1.0f, exponent);
  if (__fdiv_rn(absmax, scale) > kE4m3Max) scale = __fmul_rn(scale, 2.0f);
  return scale;
}

}  // namespace quire::kernels::cuda::cache_codec
