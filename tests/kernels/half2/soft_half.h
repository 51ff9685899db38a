#pragma once

// FP16 arithmetic in software, rounded as the GPU's half2 instructions round
// (to nearest, ties to even, one rounding per instruction, fused multiply-add
// included): the host side of the half2 tricks' CPU tests. Every finite FP16
// value is an integer times 2^-24, so a product of two is an integer times
// 2^-48 below 2^80 and the exact a * b + c fits a 128-bit integer, rounded
// once at the end. Non-finite operands are left to the compiler's _Float16.

#include <bit>
#include <cstdint>

namespace quire::test::soft_half {

// GCC's 128-bit integers (an extension, named so that -Wpedantic allows them).
__extension__ using Int128 = __int128;
__extension__ using UInt128 = unsigned __int128;

inline bool finite(std::uint16_t h) {
  return (h & 0x7c00u) != 0x7c00u;
}

// A finite FP16 value as a signed integer mantissa times 2^exponent.
struct Parts {
  Int128 mantissa;
  int exponent;  // -24 .. 5
};
inline Parts parts_of(std::uint16_t h) {
  const int field = (h >> 10) & 0x1f;
  const int fraction = h & 0x3ff;
  // Normal: (1024 + fraction) * 2^(field - 25); subnormal: fraction * 2^-24.
  const Int128 mantissa = field == 0 ? fraction : 1024 + fraction;
  return Parts{(h & 0x8000u) ? -mantissa : mantissa, field == 0 ? -24 : field - 25};
}

inline Int128 power_of_two(int exponent) {
  return static_cast<Int128>(1) << exponent;
}

// An exact value in units of 2^-48 rounded to FP16, ties to even.
inline std::uint16_t round_units(Int128 value, bool negative_zero) {
  if (value == 0) return negative_zero ? 0x8000u : 0x0000u;
  const bool negative = value < 0;
  UInt128 magnitude = negative ? -static_cast<UInt128>(value) : static_cast<UInt128>(value);
  int length = 0;
  for (UInt128 m = magnitude; m != 0; m >>= 1)
    ++length;
  // 11 significant bits, and nothing finer than 2^-24 (2^24 units).
  const int shift = length - 11 > 24 ? length - 11 : 24;
  UInt128 kept = magnitude >> shift;
  const UInt128 rest = magnitude - (kept << shift);
  const UInt128 half_way = static_cast<UInt128>(1) << (shift - 1);
  if (rest > half_way || (rest == half_way && (kept & 1u))) ++kept;
  int exponent = shift;
  if (kept == 2048) {
    kept = 1024;
    ++exponent;
  }
  std::uint16_t bits = 0;
  if (kept < 1024) {
    bits = static_cast<std::uint16_t>(kept);  // subnormal (exponent is 24)
  } else {
    const int field = exponent - 23;
    bits = field >= 31 ? std::uint16_t{0x7c00}
                       : static_cast<std::uint16_t>((field << 10) | static_cast<int>(kept - 1024));
  }
  return static_cast<std::uint16_t>(bits | (negative ? 0x8000u : 0u));
}

inline std::uint16_t from_compiler(_Float16 value) {
  return std::bit_cast<std::uint16_t>(value);
}
inline _Float16 to_compiler(std::uint16_t bits) {
  return std::bit_cast<_Float16>(bits);
}

// a * b + c with one rounding.
inline std::uint16_t fma(std::uint16_t a, std::uint16_t b, std::uint16_t c) {
  if (!finite(a) || !finite(b) || !finite(c)) {
    return from_compiler(static_cast<_Float16>(static_cast<float>(to_compiler(a)) *
                                                   static_cast<float>(to_compiler(b)) +
                                               static_cast<float>(to_compiler(c))));
  }
  // In units of 2^-48: the product below 2^80, the addend below 2^64.
  const Parts pa = parts_of(a), pb = parts_of(b), pc = parts_of(c);
  const Int128 product = pa.mantissa * pb.mantissa * power_of_two(pa.exponent + pb.exponent + 48);
  const Int128 sum = product + pc.mantissa * power_of_two(pc.exponent + 48);
  const bool product_negative_zero = product == 0 && (((a ^ b) & 0x8000u) != 0);
  const bool negative_zero = sum == 0 && product_negative_zero && (c == 0x8000u);
  return round_units(sum, negative_zero);
}

inline std::uint16_t add(std::uint16_t a, std::uint16_t b) {
  return fma(a, 0x3c00u, b);
}
inline std::uint16_t sub(std::uint16_t a, std::uint16_t b) {
  return fma(a, 0x3c00u, static_cast<std::uint16_t>(b ^ 0x8000u));
}
inline std::uint16_t mul(std::uint16_t a, std::uint16_t b) {
  // The sign of a zero product is the product's (a + (-0) keeps it).
  return fma(a, b, 0x8000u);
}

// FP32 to FP16, ties to even (the GPU's __float2half_rn), for finite inputs.
inline std::uint16_t from_float(float value) {
  return from_compiler(static_cast<_Float16>(value));
}
inline float to_float(std::uint16_t bits) {
  return static_cast<float>(to_compiler(bits));
}

// The lane-wise steps on packed pairs that half2_unpack.h's templates take.
struct PairOps {
  static std::uint16_t low(std::uint32_t pair) { return static_cast<std::uint16_t>(pair); }
  static std::uint16_t high(std::uint32_t pair) { return static_cast<std::uint16_t>(pair >> 16); }
  static std::uint32_t join(std::uint16_t lo, std::uint16_t hi) {
    return std::uint32_t{lo} | (std::uint32_t{hi} << 16);
  }
  static std::uint32_t sub(std::uint32_t a, std::uint32_t b) {
    return join(soft_half::sub(low(a), low(b)), soft_half::sub(high(a), high(b)));
  }
  static std::uint32_t fma(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
    return join(soft_half::fma(low(a), low(b), low(c)), soft_half::fma(high(a), high(b), high(c)));
  }
  static std::uint16_t from_float(float value) { return soft_half::from_float(value); }
};

}  // namespace quire::test::soft_half
