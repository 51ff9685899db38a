#pragma once

// Values of a 32-row block of packed EXL2 words, sixteen columns at a time in
// 512-bit registers: what the 512-bit decode kernel
// (linear_exl2_integer_wide.cpp) and the integer tiles
// (linear_exl2_batched.cpp) unpack into 16-bit lanes. AVX-512BW as the target,
// so that they inline into both kernels' VNNI and non-VNNI instances.

#if defined(__x86_64__) && defined(__GNUC__)

// GCC 12's AVX-512 intrinsics trip -Wmaybe-uninitialized in its own header
// (GCC bug 105593), hence around the include.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

#include "packed_values.h"

namespace quire::kernels::linear_detail::wide_values {

// The value at bit `Bit` of a block's words w[0..Bits), in bits [0, Bits)
// of each 32-bit lane.
template <int Bits, int Bit>
__attribute__((target("avx512f,avx512bw"), always_inline)) inline __m512i value_low(
    const __m512i* w) {
  constexpr int word = Bit / 32;
  constexpr int shift = Bit % 32;
  __m512i v = _mm512_srli_epi32(w[word], shift);
  if constexpr (shift + Bits > 32)
    v = _mm512_or_si512(v, _mm512_slli_epi32(w[word + 1], 32 - shift));
  return _mm512_and_si512(v, _mm512_set1_epi32(int(kValueMask<Bits>)));
}

// The same value in bits [16, 16 + Bits).
template <int Bits, int Bit>
__attribute__((target("avx512f,avx512bw"), always_inline)) inline __m512i value_high(
    const __m512i* w) {
  constexpr int word = Bit / 32;
  constexpr int shift = Bit % 32;
  const __m512i mask = _mm512_set1_epi32(int(kValueMask<Bits> << 16));
  if constexpr (shift + Bits > 32) {
    return _mm512_and_si512(_mm512_slli_epi32(value_low<Bits, Bit>(w), 16), mask);
  } else if constexpr (shift >= 16) {
    return _mm512_and_si512(_mm512_srli_epi32(w[word], shift - 16), mask);
  } else {
    return _mm512_and_si512(_mm512_slli_epi32(w[word], 16 - shift), mask);
  }
}

}  // namespace quire::kernels::linear_detail::wide_values

#endif
