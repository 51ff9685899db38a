#pragma once

// EXL3's trellis decoding on CUDA (Exl3Weight; the scalar definition is
// kernels/cpu exl3_trellis.h): a warp decodes one 16x16 tile, each lane the
// eight positions 8 L .. 8 L + 7 that it holds of the tensor cores' B
// operand, straight into the FP16 pairs an mma.m16n8k16 takes.
//
// Lane L's eight states are the stream bits [8 L b + b - 16, 8 L b + 8 b)
// (b bits per weight): at most 7 b + 16 = 72 bits, which start inside one
// 32-bit word and end inside the second word after it. The lane reads those
// three words, shifts them once by its own offset into a window that starts
// at its first state, and then cuts every state out at a compile-time
// position: one funnel or plain shift and one mask per state.
//
// The codebooks follow exllamav3's codebook.cuh and round as the CPU's
// exl3_codebook_half does: 3INST and MCG add the two FP16 halves of the
// masked hash with one rounding (__hadd2), MUL1 maps the byte sum with one
// FP16 fma (__hfma2).

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "quire/kernels/linear_weight.h"

namespace quire::kernels::cuda::linear_detail {

inline constexpr int kTileSide = 16;

// 32-bit words of one tile's stream at `bits` bits per weight.
__host__ __device__ constexpr int tile_words(int bits) {
  return 8 * bits;
}

// Where a lane finds its window in any tile: the tile words j0, j1, j2
// (wrapping at the tile's end) and the bit of j0 where the window starts.
struct LaneWindow {
  int j0 = 0;
  int j1 = 0;
  int j2 = 0;
  int offset = 0;
};

__device__ __forceinline__ LaneWindow lane_window(int bits, int lane) {
  const int total = 256 * bits;
  // Lane 0's first state reaches back past the tile's start (tail-biting).
  const int start = (8 * lane * bits + bits - 16 + total) % total;
  const int words = tile_words(bits);
  LaneWindow w;
  w.j0 = start / 32;
  w.j1 = (w.j0 + 1) % words;
  w.j2 = (w.j0 + 2) % words;
  w.offset = start % 32;
  return w;
}

// Whether a window at `bits` can reach the third word (7 b + 16 bits from an
// offset of up to 31; exactly: from 5 bits on).
__host__ __device__ constexpr bool window_needs_third_word(int bits) {
  return bits >= 5;
}

// The 16 bits at window bit Q (the first being the most significant of v0).
template <int Q>
__device__ __forceinline__ std::uint32_t window_state(std::uint32_t v0, std::uint32_t v1,
                                                      std::uint32_t v2) {
  static_assert(Q >= 0 && Q + 16 <= 96, "a state lies inside the window");
  if constexpr (Q + 16 <= 32) {
    return (v0 >> (16 - Q)) & 0xffffu;
  } else if constexpr (Q < 32) {
    return __funnelshift_r(v1, v0, 48 - Q) & 0xffffu;
  } else if constexpr (Q + 16 <= 64) {
    return (v1 >> (48 - Q)) & 0xffffu;
  } else {
    return __funnelshift_r(v2, v1, 80 - Q) & 0xffffu;
  }
}

// The lop3 both 3INST and MCG apply: (x & 0x8fff8fff) ^ 0x3b603b60, which
// leaves each half an FP16 value between 1/8 and 2 in magnitude.
__device__ __forceinline__ std::uint32_t mask_halves(std::uint32_t x) {
  return (x & 0x8fff8fffu) ^ 0x3b603b60u;  // one lop3
}

__device__ __forceinline__ std::uint32_t half2_bits(__half2 h) {
  return *reinterpret_cast<const std::uint32_t*>(&h);
}

__device__ __forceinline__ __half2 bits_half2(std::uint32_t u) {
  return *reinterpret_cast<const __half2*>(&u);
}

// The codebook values of two states as one FP16 pair, the first in the low
// half.
template <Exl3Codebook Book>
__device__ __forceinline__ std::uint32_t codebook_pair(std::uint32_t s0, std::uint32_t s1) {
  if constexpr (Book == Exl3Codebook::mul1) {
    // The byte sum lands in the mantissa of 0x6400 (FP16 1024): 1024 + sum,
    // then (1024 + sum) * 0x1eee + 0xc931 with one rounding.
    const std::uint32_t u0 = __dp4a(s0 * kExl3Mul1Multiplier, 0x01010101u, 0x6400u);
    const std::uint32_t u1 = __dp4a(s1 * kExl3Mul1Multiplier, 0x01010101u, 0x6400u);
    const __half2 sums = bits_half2(__byte_perm(u0, u1, 0x5410));
    const __half2 scale = __half2half2(__ushort_as_half(0x1eee));
    const __half2 bias = __half2half2(__ushort_as_half(0xc931));
    return half2_bits(__hfma2(sums, scale, bias));
  } else {
    std::uint32_t x0 = 0;
    std::uint32_t x1 = 0;
    if constexpr (Book == Exl3Codebook::three_inst) {
      x0 = s0 * 89226354u + 64248484u;
      x1 = s1 * 89226354u + 64248484u;
    } else {
      x0 = s0 * kExl3McgMultiplier;
      x1 = s1 * kExl3McgMultiplier;
    }
    const __half2 h0 = bits_half2(mask_halves(x0));
    const __half2 h1 = bits_half2(mask_halves(x1));
    return half2_bits(__hadd2(__lows2half2(h0, h1), __highs2half2(h0, h1)));
  }
}

// Lane L's eight values of the tile whose words start at `words` (32-bit,
// word j = trellis[2j] | trellis[2j + 1] << 16), as the B fragments of the
// two 8-column halves of an m16n8k16 product: b[0], b[1] for columns
// L / 4 (rows 2 (L % 4) + {0, 1} and + {8, 9}), b[2], b[3] for column
// L / 4 + 8. `words` may be shared or global memory.
template <int Bits, Exl3Codebook Book>
__device__ __forceinline__ void decode_tile_fragment(const std::uint32_t* words,
                                                     const LaneWindow& w, std::uint32_t (&b)[4]) {
  const std::uint32_t w0 = words[w.j0];
  const std::uint32_t w1 = words[w.j1];
  std::uint32_t v0 = __funnelshift_l(w1, w0, w.offset);
  std::uint32_t v1 = 0;
  std::uint32_t v2 = 0;
  if constexpr (window_needs_third_word(Bits)) {
    const std::uint32_t w2 = words[w.j2];
    v1 = __funnelshift_l(w2, w1, w.offset);
    v2 = w2 << w.offset;
  } else {
    v1 = w1 << w.offset;
  }
  const std::uint32_t s0 = window_state<0 * Bits>(v0, v1, v2);
  const std::uint32_t s1 = window_state<1 * Bits>(v0, v1, v2);
  const std::uint32_t s2 = window_state<2 * Bits>(v0, v1, v2);
  const std::uint32_t s3 = window_state<3 * Bits>(v0, v1, v2);
  const std::uint32_t s4 = window_state<4 * Bits>(v0, v1, v2);
  const std::uint32_t s5 = window_state<5 * Bits>(v0, v1, v2);
  const std::uint32_t s6 = window_state<6 * Bits>(v0, v1, v2);
  const std::uint32_t s7 = window_state<7 * Bits>(v0, v1, v2);
  b[0] = codebook_pair<Book>(s0, s1);
  b[1] = codebook_pair<Book>(s2, s3);
  b[2] = codebook_pair<Book>(s4, s5);
  b[3] = codebook_pair<Book>(s6, s7);
}

// The tile position of lane L's value j (0..7): its row (input) and column
// (output) in the 16x16 tile, as exl3_tile_row / exl3_tile_column.
__device__ __forceinline__ int fragment_row(int lane, int j) {
  return (lane % 4) * 2 + (j & 1) + ((j & 2) != 0 ? 8 : 0);
}
__device__ __forceinline__ int fragment_column(int lane, int j) {
  return lane / 4 + (j >= 4 ? 8 : 0);
}

}  // namespace quire::kernels::cuda::linear_detail
