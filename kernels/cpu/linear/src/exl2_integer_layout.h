#pragma once

// How the integer EXL2 kernel (linear_exl2_integer.cpp) expects a group's
// inputs, shared with the code that quantizes them
// (linear_exl2_integer_inputs.cpp).
//
// 16-bit inputs come in pairs: the two values of a 32-row block that share a
// 32-bit lane of vpmaddwd, the first in its low half. For 2, 4 and 8 bits the
// two weights are values 16 bits apart in one packed word (one shift and mask
// take both out); for 3, 5 and 6 bits they are neighbours.
//
// 8-bit inputs (2- and 4-bit groups only) come in quads: the four values of a
// 32-row block whose weights sit 8 bits apart in one packed word, so that one
// shift and mask put four weights in the bytes of a 32-bit lane of vpmaddubsw.
// Quad j + w * (8 / bits) of a block holds rows w * (32 / bits) + j + (8 / bits) * m,
// m = 0..3: word w, shifted right by j * bits.

#include <array>
#include <cstddef>
#include <cstdint>

#include "quire/kernels/linear_weight.h"

namespace quire::kernels::linear_detail {

// Integer sums of 16-bit inputs over more rows than this could leave 32 bits;
// longer groups are summed in chunks of this many rows.
inline constexpr int kChunkRows = 512;
inline constexpr float kInt16InputLimit = 32767.0f;
// Not 128: vpmaddubsw's inputs are signed bytes, and -128 has no positive twin.
inline constexpr float kInt8InputLimit = 127.0f;

struct ValuePair {
  int low = 0;
  int high = 0;
};
using PairTable = std::array<ValuePair, 16>;

constexpr PairTable make_pairs(int bits) {
  PairTable pairs{};
  if (16 % bits == 0) {
    const int per_word = 32 / bits;
    const int apart = 16 / bits;
    int p = 0;
    for (int word = 0; word < bits; ++word) {
      for (int i = 0; i < apart; ++i)
        pairs[std::size_t(p++)] = {word * per_word + i, word * per_word + i + apart};
    }
  } else {
    for (int p = 0; p < 16; ++p)
      pairs[std::size_t(p)] = {2 * p, 2 * p + 1};
  }
  return pairs;
}

template <int Bits>
inline constexpr PairTable kPairs = make_pairs(Bits);

inline const PairTable& pairs_for(int bits) {
  static constexpr std::array<PairTable, 9> tables = {PairTable{},   PairTable{},   make_pairs(2),
                                                      make_pairs(3), make_pairs(4), make_pairs(5),
                                                      make_pairs(6), PairTable{},   make_pairs(8)};
  return tables[std::size_t(bits)];
}

// Row (within its block) of byte m of quad q, for 2- or 4-bit values.
constexpr int quad_row(int bits, int q, int m) {
  const int per_byte = 8 / bits;
  return q / per_byte * (32 / bits) + q % per_byte + per_byte * m;
}

// The rows of a group in whole 32-row blocks; a shorter rest is multiplied
// in float.
inline int full_rows(const Exl2Group& group) {
  return group.rows / 32 * 32;
}

// Fetches into L1 the packed words of group g + 1 (when there is one) for the
// 32-column tile at `begin`: the integer tiles of both widths call it while
// they multiply group g, as each tile reads its weights from memory once
// per row block, so that the next group's words are in cache when unpacked.
inline void prefetch_next_group_tile(const Exl2Weight& weight, std::int64_t columns,
                                     std::int64_t begin, std::size_t g) {
  if (g + 1 >= weight.groups.size()) return;
  const Exl2Group& next = weight.groups[g + 1];
  const std::uint32_t* words = weight.q_weight + next.q_row * columns + begin;
  for (int row = 0; row < next.rows / 32 * next.bits; ++row) {
    __builtin_prefetch(words + row * columns, 0, 3);
    __builtin_prefetch(words + row * columns + 16, 0, 3);
  }
}

}  // namespace quire::kernels::linear_detail
