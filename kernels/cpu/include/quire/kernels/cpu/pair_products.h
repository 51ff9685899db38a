#pragma once

// vpdpwssd, the 512-bit instruction of AVX-512 VNNI that multiplies 32 pairs
// of 16-bit integers and adds each pair's two products into one of 16 32-bit
// sums: the EXL2 integer tiles (linear_exl2_batched.cpp) and the peak they
// are measured against (multiply_add_peak.cpp).

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

namespace quire::kernels {

// sum + the pair products of a and b, what _mm512_dpwssd_epi32 computes.
// GCC 12 surrounds that intrinsic with copies of the sum register (its
// builtin does not tie the sum to the result), one or two vmovdqa per
// multiply, which halved the integer tiles' rate; one asm statement does not.
// Taken and returned by value: an asm operand naming an array element kept
// the whole array in memory.
__attribute__((target("avx512f,avx512vnni"), always_inline)) inline __m512i add_pair_products(
    __m512i sum, __m512i a, __m512i b) {
  asm("vpdpwssd %2, %1, %0" : "+v"(sum) : "v"(a), "v"(b));
  return sum;
}

}  // namespace quire::kernels

#endif
