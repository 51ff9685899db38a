#pragma once

// Values of a 32-row block of packed EXL2 words, eight columns at a time in
// 256-bit registers: what the 256-bit decode kernel
// (linear_exl2_integer.cpp) and the AVX2 integer tiles
// (linear_exl2_batched_avx2.cpp) unpack into 16-bit lanes. The 512-bit
// twins are in wide_packed_values.h.

#if defined(__x86_64__) && defined(__GNUC__)

#include <immintrin.h>

#include <cstdint>

#include "exl2_integer_layout.h"
#include "packed_values.h"

namespace quire::kernels::linear_detail::narrow_values {

#define QUIRE_NARROW_VALUES __attribute__((target("avx2,fma"), always_inline)) inline

// The value at bit `Bit` of a block's words w[0..Bits), in bits [0, Bits)
// of each 32-bit lane.
template <int Bits, int Bit>
QUIRE_NARROW_VALUES __m256i value_low(const __m256i* w) {
  constexpr int word = Bit / 32;
  constexpr int shift = Bit % 32;
  __m256i v = _mm256_srli_epi32(w[word], shift);
  if constexpr (shift + Bits > 32)
    v = _mm256_or_si256(v, _mm256_slli_epi32(w[word + 1], 32 - shift));
  return _mm256_and_si256(v, _mm256_set1_epi32(int(kValueMask<Bits>)));
}

// The same value in bits [16, 16 + Bits).
template <int Bits, int Bit>
QUIRE_NARROW_VALUES __m256i value_high(const __m256i* w) {
  constexpr int word = Bit / 32;
  constexpr int shift = Bit % 32;
  const __m256i mask = _mm256_set1_epi32(int(kValueMask<Bits> << 16));
  if constexpr (shift + Bits > 32) {
    return _mm256_and_si256(_mm256_slli_epi32(value_low<Bits, Bit>(w), 16), mask);
  } else if constexpr (shift >= 16) {
    return _mm256_and_si256(_mm256_srli_epi32(w[word], shift - 16), mask);
  } else {
    return _mm256_and_si256(_mm256_slli_epi32(w[word], 16 - shift), mask);
  }
}

// Pair P of a block (exl2_integer_layout.h) as two unsigned 16-bit weights
// per lane, the first in the low half.
template <int Bits, int P>
QUIRE_NARROW_VALUES __m256i pair_lane(const __m256i* w) {
  constexpr int low = kPairs<Bits>[P].low * Bits;
  constexpr int high = kPairs<Bits>[P].high * Bits;
  if constexpr (high - low == 16 && low / 32 == (high + Bits - 1) / 32) {
    constexpr std::uint32_t mask = kValueMask<Bits> | (kValueMask<Bits> << 16);
    return _mm256_and_si256(_mm256_srli_epi32(w[low / 32], low % 32), _mm256_set1_epi32(int(mask)));
  } else {
    return _mm256_or_si256(value_low<Bits, low>(w), value_high<Bits, high>(w));
  }
}

#undef QUIRE_NARROW_VALUES

}  // namespace quire::kernels::linear_detail::narrow_values

#endif
