#pragma once

// Unpacking of column-packed integers, shared by the EXL2 and GPTQ products.
//
// Both formats store a [K, columns] matrix of b-bit integers column by column:
// the values of 32 consecutive rows of one column form a little-endian bit
// stream of b 32-bit words, held in b consecutive rows of the packed matrix at
// that column. Value j sits at bits [j*b, (j+1)*b) of the stream, so for every
// column of a tile it lies in the same word row at the same shift: the loops
// over columns below have no per-element branch and vectorize. A value that
// straddles two words (3, 5 and 6 bits) takes its high bits from the next row.

#include <cstdint>

#include "linear_internal.h"

namespace quire::kernels::linear_detail {

template <int Bits>
inline constexpr std::uint32_t kValueMask = (1u << Bits) - 1u;

// acc[i] += x * (value[i] - zero) for the T columns of one value row.
template <int Bits, bool Straddles, int T>
QUIRE_LINEAR_INLINE void accumulate_values(const std::uint32_t* __restrict lo,
                                           const std::uint32_t* __restrict hi, int shift,
                                           std::int32_t zero, float x, float* __restrict acc) {
  for (int i = 0; i < T; ++i) {
    std::uint32_t bits = lo[i] >> shift;
    if constexpr (Straddles) bits |= hi[i] << (32 - shift);
    const std::int32_t value = static_cast<std::int32_t>(bits & kValueMask<Bits>) - zero;
    acc[i] += x * static_cast<float>(value);
  }
}

// out[i] = (value[i] - zero) * scale[i] for the T columns of one value row.
template <int Bits, bool Straddles, int T>
QUIRE_LINEAR_INLINE void decode_values(const std::uint32_t* __restrict lo,
                                       const std::uint32_t* __restrict hi, int shift,
                                       std::int32_t zero, const float* __restrict scale,
                                       float* __restrict out) {
  for (int i = 0; i < T; ++i) {
    std::uint32_t bits = lo[i] >> shift;
    if constexpr (Straddles) bits |= hi[i] << (32 - shift);
    const std::int32_t value = static_cast<std::int32_t>(bits & kValueMask<Bits>) - zero;
    out[i] = static_cast<float>(value) * scale[i];
  }
}

// acc[i] += x * (value j of the block - zero) for j in [0, count): the rows of
// one block of up to 32 values, with x[j] their inputs. `stride` is the length
// of a packed row. A block shorter than 32 rows holds count * Bits / 32 words.
template <int Bits, int T>
QUIRE_LINEAR_INLINE void accumulate_block(const std::uint32_t* block, std::int64_t stride,
                                          const float* x, int count, std::int32_t zero,
                                          float* acc) {
  for (int j = 0; j < count; ++j) {
    const int bit = j * Bits;
    const int shift = bit & 31;
    const std::uint32_t* lo = block + (bit >> 5) * stride;
    if (shift + Bits <= 32) {
      accumulate_values<Bits, false, T>(lo, lo, shift, zero, x[j], acc);
    } else {
      accumulate_values<Bits, true, T>(lo, lo + stride, shift, zero, x[j], acc);
    }
  }
}

// tile[j * T + i] = (value j - zero) * scale[i] for j in [0, count).
template <int Bits, int T>
QUIRE_LINEAR_INLINE void decode_block(const std::uint32_t* block, std::int64_t stride, int count,
                                      std::int32_t zero, const float* scale, float* tile) {
  for (int j = 0; j < count; ++j) {
    const int bit = j * Bits;
    const int shift = bit & 31;
    const std::uint32_t* lo = block + (bit >> 5) * stride;
    if (shift + Bits <= 32) {
      decode_values<Bits, false, T>(lo, lo, shift, zero, scale, tile + j * T);
    } else {
      decode_values<Bits, true, T>(lo, lo + stride, shift, zero, scale, tile + j * T);
    }
  }
}

}  // namespace quire::kernels::linear_detail
