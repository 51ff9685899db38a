#pragma once

#include <bit>
#include <cstdint>

namespace quire::kernels {

// IEEE binary16 and bfloat16 conversions, exact and portable (no F16C needed).
// Float to half rounds to nearest, ties to even; overflow gives infinity.

inline float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1fu;
  const std::uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  if (exponent != 0) {
    return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
  }
  // Zero or subnormal: mantissa * 2^-24, exact in float.
  const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
  return sign ? -magnitude : magnitude;
}

inline std::uint16_t float_to_half(float value) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  const std::uint16_t sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000u);
  const std::uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude >= 0x7f800000u) {  // infinity or NaN (keep NaN quiet and non-zero)
    return static_cast<std::uint16_t>(sign | 0x7c00u | (magnitude > 0x7f800000u ? 0x200u : 0u));
  }
  if (magnitude >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // >= 65520
  if (magnitude < 0x38800000u) {
    // Result is subnormal or zero: round |value| * 2^24 to an integer, ties to even.
    // Adding 0.5 (as 2^-1 of the target unit) via the float unit does exactly that.
    const float scaled =
        std::bit_cast<float>(magnitude) + 0.5f;  // 0.5 == 2^-1: aligns unit to 2^-24
    const std::uint32_t rounded = std::bit_cast<std::uint32_t>(scaled) - 0x3f000000u;
    return static_cast<std::uint16_t>(sign | rounded);
  }
  // Normal: rebias the exponent and round the 13 dropped mantissa bits to even.
  const std::uint32_t odd = (magnitude >> 13) & 1u;
  const std::uint32_t rounded = magnitude + 0xfffu + odd;
  return static_cast<std::uint16_t>(sign | ((rounded - 0x38000000u) >> 13));
}

inline float bf16_to_float(std::uint16_t b) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16);
}

inline std::uint16_t float_to_bf16(float value) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((bits >> 16) | 0x40u);
  const std::uint32_t odd = (bits >> 16) & 1u;
  return static_cast<std::uint16_t>((bits + 0x7fffu + odd) >> 16);
}

}  // namespace quire::kernels
