#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace quire::kernels {

// FP8 E4M3 ("FN": no infinities, one NaN pattern per sign, largest finite 448),
// the format CUDA's __nv_fp8_e4m3 uses. Encoding rounds to nearest, ties to
// even, and saturates to +-448.

inline constexpr float kE4m3Max = 448.0f;

inline float e4m3_to_float(std::uint8_t code) {
  const bool negative = (code & 0x80u) != 0;
  const int exponent = (code >> 3) & 0xf;
  const int mantissa = code & 0x7;
  float magnitude;
  if (exponent == 0xf && mantissa == 0x7) {
    magnitude = std::numeric_limits<float>::quiet_NaN();
  } else if (exponent == 0) {
    magnitude = static_cast<float>(mantissa) * 0x1p-9f;
  } else {
    magnitude = std::ldexp(1.0f + static_cast<float>(mantissa) / 8.0f, exponent - 7);
  }
  return negative ? -magnitude : magnitude;
}

inline std::uint8_t float_to_e4m3(float value) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  const std::uint8_t sign = static_cast<std::uint8_t>((bits >> 24) & 0x80u);
  const std::uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return static_cast<std::uint8_t>(sign | 0x7fu);   // NaN
  if (magnitude >= 0x43e00000u) return static_cast<std::uint8_t>(sign | 0x7eu);  // >= 448
  if (magnitude < 0x3c800000u) {
    // Below 2^-6: a multiple of 2^-9. Adding 2^14 (whose ulp is 2^-9) rounds
    // to that grid, ties to even, in the float unit.
    const float grid = std::bit_cast<float>(magnitude) + 16384.0f;
    return static_cast<std::uint8_t>(sign | (std::bit_cast<std::uint32_t>(grid) - 0x46800000u));
  }
  const std::uint32_t odd = (magnitude >> 20) & 1u;
  const std::uint32_t rounded = magnitude + 0x7ffffu + odd;
  return static_cast<std::uint8_t>(sign | ((rounded - (120u << 23)) >> 20));
}

}  // namespace quire::kernels
