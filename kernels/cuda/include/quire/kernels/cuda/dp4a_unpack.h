#pragma once

// Quantized weights multiplied by 8-bit inputs four at a time (the GPU's
// dp4a: four byte products added to a 32-bit sum, exactly), the way the
// CPU's AVX2 products take EXL2's 2- and 4-bit groups (8-bit inputs scaled
// per block). Masking a word keeps codes in byte lanes without moving them:
// a 4-bit word's `word & 0x0F0F0F0F` holds values 0, 2, 4 and 6 and
// `(word >> 4) & 0x0F0F0F0F` values 1, 3, 5 and 7, so two masks, one shift
// and two dp4a take eight weights. The inputs are staged in the same order
// (input_slot), and the zero point is taken off once per block through the
// sum of its inputs: sum x (q - z) = sum x q - z sum x, all in integers.
//
// The same code runs on the GPU (the dp4a decode kernels) and on the host,
// where the CPU tests check it against plain integer sums.

#include <cmath>
#include <cstdint>

#if defined(__CUDACC__)
#define QUIRE_DP4A_INLINE __host__ __device__ __forceinline__
#else
#define QUIRE_DP4A_INLINE inline
#endif
#if defined(__CUDA_ARCH__)
#define QUIRE_DP4A_UNROLL _Pragma("unroll")
#else
#define QUIRE_DP4A_UNROLL
#endif

namespace quire::kernels::dp4a_unpack {

// The widths whose codes sit in byte lanes after a mask.
QUIRE_DP4A_INLINE constexpr bool byte_width(int bits) {
  return bits == 2 || bits == 4 || bits == 8;
}

// Where input j of a 32-value block goes among the block's 32 staged bytes
// (word = slot / 4, byte = slot % 4), so that staged word i meets the codes
// that the i-th masked word of the weights holds.
// 4 bits: weight word w gives [v0 v2 v4 v6] then [v1 v3 v5 v7] (of 8w..);
// 2 bits: word w gives [v_k v_{k+4} v_{k+8} v_{k+12}] for k = 0..3 (of 16w..);
// 8 bits: the bytes are the values.
QUIRE_DP4A_INLINE constexpr int input_slot(int bits, int j) {
  if (bits == 4) return 8 * (j / 8) + 4 * (j % 2) + (j % 8) / 2;
  if (bits == 2) return 16 * (j / 16) + 4 * (j % 4) + (j % 16) / 4;
  return j;
}

// c + the sum of the four signed byte products of a and b.
QUIRE_DP4A_INLINE std::int32_t dot4(std::uint32_t a, std::uint32_t b, std::int32_t c) {
#if defined(__CUDA_ARCH__)
  return __dp4a(static_cast<int>(a), static_cast<int>(b), c);
#else
  for (int k = 0; k < 4; ++k) {
    c += static_cast<std::int32_t>(static_cast<std::int8_t>(a >> (8 * k))) *
         static_cast<std::int32_t>(static_cast<std::int8_t>(b >> (8 * k)));
  }
  return c;
#endif
}

// c + the sum of the four products of a's unsigned bytes and b's signed ones.
QUIRE_DP4A_INLINE std::int32_t dot4_unsigned_signed(std::uint32_t a, std::uint32_t b,
                                                    std::int32_t c) {
#if defined(__CUDA_ARCH__)
  std::int32_t out;
  asm("dp4a.u32.s32 %0, %1, %2, %3;" : "=r"(out) : "r"(a), "r"(b), "r"(c));
  return out;
#else
  for (int k = 0; k < 4; ++k) {
    c += static_cast<std::int32_t>((a >> (8 * k)) & 0xffu) *
         static_cast<std::int32_t>(static_cast<std::int8_t>(b >> (8 * k)));
  }
  return c;
#endif
}

// Sum over the block's 32 values of x_j * q_j (the codes, before the zero
// point), from the block's `Bits` words and its 8 staged input words.
// Codes of 2 and 4 bits are below 128, so the signed form takes them.
template <int Bits>
QUIRE_DP4A_INLINE std::int32_t block_dot(const std::uint32_t (&words)[Bits],
                                         const std::uint32_t (&inputs)[8]) {
  static_assert(byte_width(Bits), "2, 4 or 8 bits");
  std::int32_t sum = 0;
  if constexpr (Bits == 4) {
    QUIRE_DP4A_UNROLL
    for (int w = 0; w < 4; ++w) {
      sum = dot4(words[w] & 0x0F0F0F0Fu, inputs[2 * w], sum);
      sum = dot4((words[w] >> 4) & 0x0F0F0F0Fu, inputs[2 * w + 1], sum);
    }
  } else if constexpr (Bits == 2) {
    QUIRE_DP4A_UNROLL
    for (int w = 0; w < 2; ++w) {
      QUIRE_DP4A_UNROLL
      for (int k = 0; k < 4; ++k)
        sum = dot4((words[w] >> (2 * k)) & 0x03030303u, inputs[4 * w + k], sum);
    }
  } else {
    QUIRE_DP4A_UNROLL
    for (int w = 0; w < 8; ++w)
      sum = dot4_unsigned_signed(words[w], inputs[w], sum);
  }
  return sum;
}

// The factor that maps a block's largest magnitude to 127, and an input's
// 8-bit code under it (round to nearest, ties to even, as __float2int_rn).
// A block of zeros (or non-finite inputs) gets factor 0: codes 0.
QUIRE_DP4A_INLINE float input_factor(float largest) {
  return largest > 0.0f && largest <= 3.0e38f ? 127.0f / largest : 0.0f;
}
QUIRE_DP4A_INLINE std::int32_t input_code(float x, float factor) {
#if defined(__CUDA_ARCH__)
  return __float2int_rn(x * factor);
#else
  const float scaled = x * factor;
  // The GPU's conversion gives 0 for NaN; here a cast of NaN would be undefined.
  return scaled == scaled ? static_cast<std::int32_t>(std::nearbyint(scaled)) : 0;
#endif
}

}  // namespace quire::kernels::dp4a_unpack
