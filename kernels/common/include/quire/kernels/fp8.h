#pragma once

// The 8-bit float of FP8 checkpoints (DType::F8_E4M3, PyTorch's
// float8_e4m3fn, OCP's E4M3): sign, 4 exponent bits with bias 7, 3 mantissa
// bits; exponent 0 is subnormal (m / 8 * 2^-6), there are no infinities, and
// S.1111.111 is NaN, so the largest value is 1.75 * 2^8 = 448.

#include <cmath>
#include <cstdint>

namespace quire::kernels {

inline constexpr float kE4m3Max = 448.0f;

inline float e4m3_to_float(std::uint8_t bits) {
  const int exponent = (bits >> 3) & 15;
  const int mantissa = bits & 7;
  const float sign = (bits & 0x80) != 0 ? -1.0f : 1.0f;
  if (exponent == 15 && mantissa == 7) return std::nanf("");
  if (exponent == 0) return sign * std::ldexp(static_cast<float>(mantissa), -9);
  return sign * std::ldexp(static_cast<float>(8 + mantissa), exponent - 10);
}

// The nearest E4M3 value (ties to even mantissa), saturating at ±448 as
// PyTorch's conversions used for FP8 checkpoints clamp first; NaN stays NaN.
std::uint8_t float_to_e4m3(float value);

}  // namespace quire::kernels
