#pragma once

// Quantized weights unpacked into pairs of FP16 values without converting an
// integer to a float: the code q is ORed into the mantissa of the FP16
// constant 1024 (0x6400, whose mantissa's last bit is worth 1), which gives
// the half 1024 + q, and one half2 subtraction of 1024 + zero leaves q - zero,
// exactly, two weights at a time. Codes still sitting 4 or 6 bits up in their
// word (1024 + 16q, 1024 + 64q) are brought down by one fused multiply-add,
// (1024 + 16q) / 16 - (64 + zero), also exact; so 4-bit words need one shift
// for every eight weights and 2-bit words one for every sixteen.
//
// The same code runs on the GPU (the half2 decode kernels) and on the host,
// where the CPU tests run it with a software FP16 that rounds as the GPU's
// half2 instructions do. What differs is `Ops`: the lane-wise FP16 steps on
// packed pairs (lower half first), given as 32-bit patterns:
//   static std::uint32_t sub(std::uint32_t a, std::uint32_t b);           a - b
//   static std::uint32_t fma(std::uint32_t a, std::uint32_t b, std::uint32_t c);  a*b + c
//   static std::uint16_t from_float(float x);   FP32 to FP16, ties to even
// Everything else here is integer work, identical on both sides.
//
// A 32-value block (the unit of EXL2 and of the half2 GPTQ product: `Bits`
// consecutive words, value j at bits [j*Bits, (j+1)*Bits) of the little-
// endian stream) becomes 16 pairs. Which two values share pair p depends on
// the width (pair_value), so the inputs are staged in the same order.

#include <cstdint>

#if defined(__CUDACC__)
#define QUIRE_UNPACK_INLINE __host__ __device__ __forceinline__
// The templates below are instantiated with the device's Ops in kernels and
// the software FP16's on the host, never the other way round.
#define QUIRE_UNPACK_TEMPLATE _Pragma("nv_exec_check_disable")
#else
#define QUIRE_UNPACK_INLINE inline
#define QUIRE_UNPACK_TEMPLATE
#endif
#if defined(__CUDA_ARCH__)
#define QUIRE_UNROLL _Pragma("unroll")
#else
#define QUIRE_UNROLL
#endif

namespace quire::kernels::half2_unpack {

inline constexpr int kBlockValues = 32;
inline constexpr int kBlockPairs = 16;
inline constexpr std::uint32_t kMagicPair = 0x64006400u;  // half2(1024, 1024)

// FP16 bit patterns of the constants, both lanes alike. Exact for the zero
// points the formats have (0..256; the shifted forms only serve 2 and 4 bits,
// whose zero points stay below 17).
QUIRE_UNPACK_INLINE constexpr std::uint32_t pair_of(std::uint32_t half_bits) {
  return half_bits | (half_bits << 16);
}
// 1024 + zero (the last mantissa bit of 1024 is worth 1).
QUIRE_UNPACK_INLINE constexpr std::uint32_t magic_plus(std::uint32_t zero) {
  return pair_of(0x6400u + zero);
}
// -(1024 / factor + zero) for factor 4, 16, 64: -(256 + z), -(64 + z),
// -(16 + z), whose last mantissa bits are worth 1/4, 1/16 and 1/64.
QUIRE_UNPACK_INLINE constexpr std::uint32_t negative_shifted(int factor, std::uint32_t zero) {
  return factor == 4    ? pair_of(0xDC00u + 4u * zero)
         : factor == 16 ? pair_of(0xD400u + 16u * zero)
                        : pair_of(0xCC00u + 64u * zero);
}
// 1 / factor for factor 4, 16, 64.
QUIRE_UNPACK_INLINE constexpr std::uint32_t reciprocal(int factor) {
  return factor == 4 ? pair_of(0x3400u) : factor == 16 ? pair_of(0x2C00u) : pair_of(0x2400u);
}

// What one zero point costs to prepare: the subtrahend of unshifted codes and
// the addends of the shifted ones. A GPTQ column makes one per group.
struct Centering {
  std::uint32_t minus_magic;  // 1024 + zero
  std::uint32_t shifted4;     // -(256 + zero)
  std::uint32_t shifted16;    // -(64 + zero)
  std::uint32_t shifted64;    // -(16 + zero)
};
QUIRE_UNPACK_INLINE constexpr Centering centering(std::uint32_t zero) {
  return Centering{magic_plus(zero), negative_shifted(4, zero), negative_shifted(16, zero),
                   negative_shifted(64, zero)};
}

// The widths whose values never straddle two words take the fast forms.
QUIRE_UNPACK_INLINE constexpr bool aligned_width(int bits) {
  return bits == 2 || bits == 4 || bits == 8;
}

// Value (0..31) of the block held by lane `lane` (0 lower, 1 upper) of pair p.
// 4 bits: word w's pairs are values (8w+t, 8w+t+4), t < 4; 2 bits: (16w+t,
// 16w+t+8), t < 8; 8 bits: (4w+t, 4w+t+2), t < 2; other widths (2p, 2p+1).
QUIRE_UNPACK_INLINE constexpr int pair_value(int bits, int pair, int lane) {
  if (bits == 4) return 8 * (pair / 4) + pair % 4 + 4 * lane;
  if (bits == 2) return 16 * (pair / 8) + pair % 8 + 8 * lane;
  if (bits == 8) return 4 * (pair / 2) + pair % 2 + 2 * lane;
  return 2 * pair + lane;
}
// Where value j of the block goes among the 32 staged halves (2p + lane).
QUIRE_UNPACK_INLINE constexpr int value_slot(int bits, int j) {
  if (bits == 4) return 8 * (j / 8) + 2 * (j % 4) + (j % 8) / 4;
  if (bits == 2) return 16 * (j / 16) + 2 * (j % 8) + (j % 16) / 8;
  if (bits == 8) return 4 * (j / 4) + 2 * (j % 2) + (j % 4) / 2;
  return j;
}

// Bytes of {hi:lo} picked by the selector's four nibbles (the GPU's PRMT).
QUIRE_UNPACK_INLINE std::uint32_t byte_perm(std::uint32_t lo, std::uint32_t hi,
                                            std::uint32_t selector) {
#if defined(__CUDA_ARCH__)
  return __byte_perm(lo, hi, selector);
#else
  const std::uint64_t both = (std::uint64_t{hi} << 32) | lo;
  std::uint32_t out = 0;
  for (int k = 0; k < 4; ++k) {
    const auto pick = static_cast<unsigned>((selector >> (4 * k)) & 7u);
    out |= static_cast<std::uint32_t>((both >> (8 * pick)) & 0xffu) << (8 * k);
  }
  return out;
#endif
}

// (value & mask) | kMagicPair: one LOP3 on the GPU, written out so that the
// PTX says so too (the static count of instructions per weight reads PTX).
template <std::uint32_t Mask>
QUIRE_UNPACK_INLINE std::uint32_t magic_bits(std::uint32_t value) {
#if defined(__CUDA_ARCH__)
  std::uint32_t out;
  // 0xEA is the truth table of (a & b) | c.
  asm("lop3.b32 %0, %1, %2, %3, 0xEA;" : "=r"(out) : "r"(value), "n"(Mask), "n"(kMagicPair));
  return out;
#else
  return (value & Mask) | kMagicPair;
#endif
}

// The four pairs of one 4-bit word (values 8w..8w+7 of the block), into out[0..4).
QUIRE_UNPACK_TEMPLATE
template <class Ops>
QUIRE_UNPACK_INLINE void unpack_word4(std::uint32_t word, const Centering& c, std::uint32_t* out) {
  const std::uint32_t high = word >> 8;
  out[0] = Ops::sub(magic_bits<0x000F000Fu>(word), c.minus_magic);
  out[1] = Ops::fma(magic_bits<0x00F000F0u>(word), reciprocal(16), c.shifted16);
  out[2] = Ops::sub(magic_bits<0x000F000Fu>(high), c.minus_magic);
  out[3] = Ops::fma(magic_bits<0x00F000F0u>(high), reciprocal(16), c.shifted16);
}

// The eight pairs of one 2-bit word (values 16w..16w+15), into out[0..8).
QUIRE_UNPACK_TEMPLATE
template <class Ops>
QUIRE_UNPACK_INLINE void unpack_word2(std::uint32_t word, const Centering& c, std::uint32_t* out) {
  QUIRE_UNROLL
  for (int half = 0; half < 2; ++half) {
    const std::uint32_t w = half == 0 ? word : word >> 8;
    std::uint32_t* o = out + 4 * half;
    o[0] = Ops::sub(magic_bits<0x00030003u>(w), c.minus_magic);
    o[1] = Ops::fma(magic_bits<0x000C000Cu>(w), reciprocal(4), c.shifted4);
    o[2] = Ops::fma(magic_bits<0x00300030u>(w), reciprocal(16), c.shifted16);
    o[3] = Ops::fma(magic_bits<0x00C000C0u>(w), reciprocal(64), c.shifted64);
  }
}

// The two pairs of one 8-bit word (values 4w..4w+3): each byte placed under
// the high byte 0x64 by one byte permutation.
QUIRE_UNPACK_TEMPLATE
template <class Ops>
QUIRE_UNPACK_INLINE void unpack_word8(std::uint32_t word, const Centering& c, std::uint32_t* out) {
  out[0] = Ops::sub(byte_perm(word, 0x64646464u, 0x4240u), c.minus_magic);
  out[1] = Ops::sub(byte_perm(word, 0x64646464u, 0x4341u), c.minus_magic);
}

// Value j of a block of `Bits`-wide values in words[0..Bits), taking its
// high bits from the next word when it straddles two (3, 5 and 6 bits).
template <int Bits>
QUIRE_UNPACK_INLINE std::uint32_t straddling_value(const std::uint32_t (&words)[Bits], int j) {
  const int bit = j * Bits;
  const int word = bit >> 5;
  const int shift = bit & 31;
  std::uint32_t value = words[word] >> shift;
  if (shift + Bits > 32 && word + 1 < Bits) value |= words[word + 1] << (32 - shift);
  return value & ((1u << Bits) - 1u);
}

// The 16 pairs of a whole block, in pair order: the fast forms word by word
// for 2, 4 and 8 bits, values (2p, 2p+1) by shifts and masks otherwise.
QUIRE_UNPACK_TEMPLATE
template <int Bits, class Ops>
QUIRE_UNPACK_INLINE void unpack_block(const std::uint32_t (&words)[Bits], const Centering& c,
                                      std::uint32_t (&pairs)[kBlockPairs]) {
  if constexpr (Bits == 4) {
    QUIRE_UNROLL
    for (int w = 0; w < 4; ++w)
      unpack_word4<Ops>(words[w], c, pairs + 4 * w);
  } else if constexpr (Bits == 2) {
    QUIRE_UNROLL
    for (int w = 0; w < 2; ++w)
      unpack_word2<Ops>(words[w], c, pairs + 8 * w);
  } else if constexpr (Bits == 8) {
    QUIRE_UNROLL
    for (int w = 0; w < 8; ++w)
      unpack_word8<Ops>(words[w], c, pairs + 2 * w);
  } else {
    QUIRE_UNROLL
    for (int p = 0; p < kBlockPairs; ++p) {
      const std::uint32_t low = straddling_value<Bits>(words, 2 * p);
      const std::uint32_t high = straddling_value<Bits>(words, 2 * p + 1);
      pairs[p] = Ops::sub(low | (high << 16) | kMagicPair, c.minus_magic);
    }
  }
}

// Pairs one word of a block unpacks to (the unit of the kernels' inner loop),
// and words per unit: a whole block for the straddling widths.
template <int Bits>
inline constexpr int kUnitWords = (Bits == 2 || Bits == 4 || Bits == 8) ? 1 : Bits;
template <int Bits>
inline constexpr int kUnitPairs = kBlockPairs* kUnitWords<Bits> / Bits;

// The input scale of a staged block: the power of two that brings the
// block's largest magnitude `largest` (an FP32 bit pattern, sign cleared)
// into [2, 4). Then a block's half sums stay below 32 * 4 * 256 = 32768 in
// magnitude whatever the codes (zero points up to 256), inside FP16's 65504,
// and small inputs keep their precision. Returns the FP32 bit pattern of the
// factor; zero, subnormal and non-finite maxima give 1.
QUIRE_UNPACK_INLINE constexpr std::uint32_t block_input_scale(std::uint32_t largest) {
  const auto exponent = (largest >> 23) & 0xffu;
  if (exponent == 0 || exponent == 0xff) return 0x3f800000u;
  // largest = 1.m * 2^(exponent - 127); the factor 2^(128 - exponent) puts
  // it in [2, 4), and its biased exponent 255 - exponent lies in [1, 254].
  return (255u - exponent) << 23;
}

// Input j of a block as staged: times the block's factor (a power of two, so
// exact in FP32), rounded once to FP16.
QUIRE_UNPACK_TEMPLATE
template <class Ops>
QUIRE_UNPACK_INLINE std::uint16_t staged_input(float x, float factor) {
  return Ops::from_float(x * factor);
}

// acc + the lane-wise sum of x[i] * w[i] over `Count` pairs, one fused
// multiply-add per pair in the order given: the half2 kernels' inner loop.
QUIRE_UNPACK_TEMPLATE
template <int Count, class Ops>
QUIRE_UNPACK_INLINE std::uint32_t dot_pairs(const std::uint32_t* x, const std::uint32_t* w,
                                            std::uint32_t acc) {
  QUIRE_UNROLL
  for (int i = 0; i < Count; ++i)
    acc = Ops::fma(x[i], w[i], acc);
  return acc;
}

}  // namespace quire::kernels::half2_unpack
