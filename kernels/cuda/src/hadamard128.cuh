#pragma once

// The 128-point Walsh-Hadamard transform of EXL3's rotations (Exl3Weight),
// one block of 128 values per warp: lane L holds values 4L .. 4L + 3 in
// natural order. Unnormalized (entries +1 and -1): the callers fold the
// 1/sqrt(128) of both rotations into one exact factor of 1/128.
//
// The butterflies run in the order of the CPU's exl3_hadamard128 (distance
// 1 and 2 inside a lane, then 4 to 64 across lanes, a + b and a - b at each),
// so the sums are the CPU's bit for bit before its scaling.

#include <cuda_runtime.h>

namespace quire::kernels::cuda::linear_detail {

inline constexpr int kHadamardSize = 128;
// 2^-7: the two rotations' 1/sqrt(128) together, a power of two.
inline constexpr float kHadamardSquaredScale = 1.0f / 128.0f;

__device__ __forceinline__ void hadamard128(float (&v)[4]) {
  const unsigned lane = threadIdx.x & 31u;
  float a0 = v[0] + v[1];
  float a1 = v[0] - v[1];
  float a2 = v[2] + v[3];
  float a3 = v[2] - v[3];
  v[0] = a0 + a2;
  v[1] = a1 + a3;
  v[2] = a0 - a2;
  v[3] = a1 - a3;
#pragma unroll
  for (unsigned distance = 1; distance < 32; distance *= 2) {
    // The lane whose bit is set holds the second value of each pair.
    const bool second = (lane & distance) != 0;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const float other = __shfl_xor_sync(0xffffffffu, v[i], static_cast<int>(distance));
      v[i] = second ? other - v[i] : v[i] + other;
    }
  }
}

// The largest magnitude of the warp's 128 values; NaN is ignored (fmaxf), so
// a NaN input stays NaN through the products rather than in the scale.
__device__ __forceinline__ float warp_max_abs(const float (&v)[4]) {
  float m = fmaxf(fmaxf(fabsf(v[0]), fabsf(v[1])), fmaxf(fabsf(v[2]), fabsf(v[3])));
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2)
    m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, offset));
  return m;
}

// The power of two that brings a largest magnitude into [2^14, 2^15), so
// that values converted to FP16 neither overflow nor lose bits to the
// subnormal range; 1 for zero, infinity and NaN. `inverse` receives its
// reciprocal, also exact.
__device__ __forceinline__ float fp16_range_factor(float largest, float& inverse) {
  float factor = 1.0f;
  inverse = 1.0f;
  if (largest > 0.0f && isfinite(largest)) {
    int exponent = 0;
    frexpf(largest, &exponent);
    exponent = max(exponent, -100);
    factor = ldexpf(1.0f, 15 - exponent);
    inverse = ldexpf(1.0f, exponent - 15);
  }
  return factor;
}

}  // namespace quire::kernels::cuda::linear_detail
