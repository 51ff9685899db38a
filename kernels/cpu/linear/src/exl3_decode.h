#pragma once

// Decoding one EXL3 tile into floats for the products (exl3_trellis.h has the
// definitions this follows bit for bit).

#include <cstdint>

#include "quire/kernels/cpu/exl3_trellis.h"

namespace quire::kernels::linear_detail {

// The tile's 32-bit stream words, most significant bit first: word j =
// tile[2j] | tile[2j + 1] << 16.
inline std::uint32_t exl3_word(const std::uint16_t* tile, int j) {
  return static_cast<std::uint32_t>(tile[2 * j]) | static_cast<std::uint32_t>(tile[2 * j + 1])
                                                       << 16;
}

// out[row * stride + column] = the codebook value of each tile position
// (`table` from exl3_codebook_table). Each state is read from a 64-bit window
// of two stream words, the first position's wrapping to the tile's end.
inline void exl3_decode_tile(const std::uint16_t* tile, int bits, const float* table, float* out,
                             int stride) {
  const int words = kExl3TileWeights * bits / 32;
  const int total_bits = kExl3TileWeights * bits;
  std::uint32_t stream[kExl3MaxBits * kExl3TileWeights / 32];
  for (int j = 0; j < words; ++j)
    stream[j] = exl3_word(tile, j);
  for (int t = 0; t < kExl3TileWeights; ++t) {
    int start = (t + 1) * bits - 16;
    if (start < 0) start += total_bits;
    const int word = start / 32;
    const int next = word + 1 == words ? 0 : word + 1;
    const std::uint64_t window =
        (static_cast<std::uint64_t>(stream[word]) << 32) | static_cast<std::uint64_t>(stream[next]);
    const auto state = static_cast<std::uint32_t>(window >> (48 - start % 32)) & 0xffffu;
    out[exl3_tile_row(t) * stride + exl3_tile_column(t)] = table[state];
  }
}

}  // namespace quire::kernels::linear_detail
