#pragma once

// The 512-bit multiply-adds of AVX-512 VNNI. vpdpwssd multiplies 32 pairs of
// 16-bit integers and adds each pair's two products into one of 16 32-bit
// sums: the EXL2 integer tiles (linear_exl2_batched.cpp) and the peak they
// are measured against (multiply_add_peak.cpp). vpdpbusd does the same for
// 64 byte products in groups of four: the EXL2 decode kernel's 8-bit inputs
// (linear_exl2_integer.cpp).

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#include <cstdint>

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

// The same with the 32-bit word `b` (two 16-bit integers) in every lane,
// broadcast from memory. AVX-512F alone as the target, for the reason below.
__attribute__((target("avx512f"), always_inline)) inline __m512i add_pair_products(
    __m512i sum, __m512i a, const std::int32_t& b) {
  asm("vpdpwssd %2%{1to16%}, %1, %0" : "+v"(sum) : "v"(a), "m"(b));
  return sum;
}

// sum + the products of 64 unsigned bytes of `weights` with the four signed
// bytes of `inputs` repeated in every 32-bit lane, each lane's four products
// added into its sum: vpdpbusd, the input word broadcast from memory. Exact
// (nothing saturates), so it gives the sums of vpmaddubsw, vpaddw and
// vpmaddwd by ones wherever those do not overflow. An asm statement for the
// reason above, and because the broadcast operand saves a register and an
// instruction per input row. Compiled for AVX-512F alone (the assembler
// takes the instruction whatever the target), so that it inlines into
// kernels that also have a non-VNNI instance; callers check
// wide_vnni_allowed() before it runs.
__attribute__((target("avx512f"), always_inline)) inline __m512i add_byte_products(
    __m512i sum, __m512i weights, const std::int32_t& inputs) {
  asm("vpdpbusd %2%{1to16%}, %1, %0" : "+v"(sum) : "v"(weights), "m"(inputs));
  return sum;
}

}  // namespace quire::kernels

#endif
