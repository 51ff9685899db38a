#pragma once

// EXL3's tile coding, as exllamav3 defines it (quant/exl3_dq.cuh,
// quant/codebook.cuh, exl3_lib/quantize.py), in plain scalar C++: the
// definition every EXL3 product, the writer and the quantizer share, and the
// reference the vectorized decoders are tested against. See Exl3Weight
// (linear_weight.h) for where the pieces sit in a layer.

#include <cstdint>

#include "quire/kernels/linear_weight.h"

namespace quire::kernels {

inline constexpr int kExl3TileSide = 16;
inline constexpr int kExl3TileWeights = 256;
// Both rotations work on blocks of this many inputs or outputs.
inline constexpr int kExl3RotationSize = 128;
inline constexpr int kExl3MinBits = 1;
inline constexpr int kExl3MaxBits = 8;

// FP16 words of one tile's packed stream at `bits` bits per weight.
constexpr int exl3_tile_words(int bits) {
  return kExl3TileSide * bits;
}

// Where tile position t (0..255) lies in the 16x16 tile: the order of the
// tensor cores' fragments. Eight consecutive positions share a lane of 32;
// they hold rows r, r + 1, r + 8, r + 9 of column c and then of column c + 8,
// with r = 2 (lane % 4) and c = lane / 4. Rows run along the inputs, columns
// along the outputs.
constexpr int exl3_tile_row(int t) {
  const int lane = t / 8;
  const int j = t % 8;
  return (lane % 4) * 2 + (j & 1) + ((j & 2) != 0 ? 8 : 0);
}
constexpr int exl3_tile_column(int t) {
  return t / 32 + ((t % 8) >= 4 ? 8 : 0);
}

// Bit `bit` (0 = the first, most significant) of a tile's stream.
inline std::uint32_t exl3_stream_bit(const std::uint16_t* tile, int bits, int bit) {
  const int total = kExl3TileWeights * bits;
  bit = ((bit % total) + total) % total;
  // Word j of 32 bits is tile[2j] | tile[2j + 1] << 16, read from its top bit.
  const int word = bit / 32;
  const int in_word = 31 - bit % 32;
  const std::uint16_t half = tile[2 * word + (in_word >= 16 ? 1 : 0)];
  return (half >> (in_word % 16)) & 1u;
}

// The 16-bit trellis state of tile position t: the stream's 16 bits that end
// with position t's symbol, the earliest most significant; position 0's
// reach back into the tile's last symbols.
inline std::uint32_t exl3_state(const std::uint16_t* tile, int bits, int t) {
  const int end = (t + 1) * bits;
  std::uint32_t state = 0;
  for (int bit = end - 16; bit < end; ++bit)
    state = (state << 1) | exl3_stream_bit(tile, bits, bit);
  return state;
}

// The FP16 bit pattern of a state's codebook value, exactly as exllamav3's
// CUDA decode rounds it: 3INST and MCG add two FP16 halves of the hashed
// state (their sum is exact in float and rounded once, as __hadd rounds);
// MUL1 computes (1024 + byte sum) * 0x1eee + 0xc931 in FP16 with one rounding
// (__hfma), also exact in float before it.
std::uint16_t exl3_codebook_half(std::uint32_t state, Exl3Codebook codebook);
float exl3_codebook_value(std::uint32_t state, Exl3Codebook codebook);

// The codebook's value of every state, 65536 floats, built on first use and
// kept for the process.
const float* exl3_codebook_table(Exl3Codebook codebook);

// MUL1's values before FP16 rounding are affine in the hashed state's byte
// sum s (0..1020): value ~ kExl3Mul1Scale * s + kExl3Mul1Offset. Integer
// products use this form (exllamav3's CPU kernel does too); the rounding it
// skips is below 2^-11 relative.
float exl3_mul1_scale();
float exl3_mul1_offset();
// The byte sum of a state's MUL1 hash.
inline std::uint32_t exl3_mul1_byte_sum(std::uint32_t state) {
  const std::uint32_t x = state * kExl3Mul1Multiplier;
  return (x & 0xffu) + ((x >> 8) & 0xffu) + ((x >> 16) & 0xffu) + (x >> 24);
}

// In-place orthonormal 128-point Walsh-Hadamard transform (natural order,
// the Sylvester matrix exllamav3 builds, scaled by 1/sqrt(128)); its own
// inverse.
void exl3_hadamard128(float* values);
void exl3_hadamard128(double* values);

}  // namespace quire::kernels
