#pragma once

// Where the EXL3 decode kernels find each tile position's 16-bit state,
// planned at compile time for a width (bits) and a register of Lanes 32-bit
// lanes (16 for the 512-bit kernels, 8 for the 256-bit ones).
//
// Lanes consecutive tile positions make a "vector" m of the tile. The
// vector's window is the few 32-bit stream words from the one holding its
// first state's first bit (the tile's last word first for vector 0, whose
// first state wraps around the tile's end). Each lane gathers the three
// window bytes that hold its state (a byte permute), shifts and masks: the
// byte indices and shifts are the plan. Within the window the offsets
// repeat with m modulo kPatterns (Lanes states advance Lanes * bits bits, a
// whole number of words after at most 2 vectors of 16 lanes or 4 of 8), so
// that few patterns serve all of a tile's vectors.

#include <cstdint>

#include "quire/kernels/cpu/exl3_trellis.h"

namespace quire::kernels::linear_detail {

template <int Lanes>
struct alignas(64) Exl3WindowPlan {
  static constexpr int kVectors = kExl3TileWeights / Lanes;
  static constexpr int kPatterns = 32 / Lanes;  // 2 for 16 lanes, 4 for 8

  // Byte indices into the window, three stream bytes per lane (most
  // significant in lane byte 2), the fourth a copy that the mask removes.
  std::uint8_t index[kPatterns][4 * Lanes] = {};
  std::uint32_t shift[kPatterns][Lanes] = {};  // right shift leaving the state
  // The same as vpmultishiftqb's selectors (16 lanes): each lane's bytes 0
  // and 1 take the 8 bits from its shift on, bytes 2 and 3 its byte 3, which
  // a zero-masking permute clears (so the lane holds the state alone).
  std::uint8_t selector[kPatterns][4 * Lanes] = {};
  int first_word[kVectors] = {};          // -1: the tile's last word
  std::uint8_t load_mask[kVectors] = {};  // the stream words to load
  int words = 0;                          // 32-bit words per tile
};

// Register byte of relative stream byte i: each 32-bit word is stored
// little-endian and read from its most significant bit.
constexpr int exl3_register_byte(int i) {
  return 4 * (i / 4) + 3 - i % 4;
}

template <int Lanes>
constexpr Exl3WindowPlan<Lanes> make_exl3_window_plan(int bits) {
  Exl3WindowPlan<Lanes> plan;
  plan.words = kExl3TileWeights * bits / 32;
  for (int m = 0; m < Exl3WindowPlan<Lanes>::kVectors; ++m) {
    const int start = (Lanes * m + 1) * bits - 16;  // the first state's first bit
    const int first = start < 0 ? -1 : start / 32;
    const int end = (Lanes * m + Lanes) * bits - 32 * first;
    const int loaded = (end + 31) / 32;
    plan.first_word[m] = first;
    // The wrapped window of vector 0 takes the tile's last word as its first.
    plan.load_mask[m] = static_cast<std::uint8_t>((1u << (first < 0 ? loaded - 1 : loaded)) - 1);
    const int pattern = m % Exl3WindowPlan<Lanes>::kPatterns;
    for (int lane = 0; lane < Lanes; ++lane) {
      const int bit = (Lanes * m + lane + 1) * bits - 16 - 32 * first;
      const int byte = bit / 8;
      std::uint8_t* index = plan.index[pattern] + 4 * lane;
      index[0] = static_cast<std::uint8_t>(exl3_register_byte(byte + 2));
      index[1] = static_cast<std::uint8_t>(exl3_register_byte(byte + 1));
      index[2] = static_cast<std::uint8_t>(exl3_register_byte(byte));
      index[3] = index[2];
      plan.shift[pattern][lane] = static_cast<std::uint32_t>(8 - bit % 8);
      // Selectors count bits within the lane's 64-bit word.
      const int lane_bit = 32 * (lane % 2);
      std::uint8_t* selector = plan.selector[pattern] + 4 * lane;
      selector[0] = static_cast<std::uint8_t>(lane_bit + 8 - bit % 8);
      selector[1] = static_cast<std::uint8_t>(lane_bit + 16 - bit % 8);
      selector[2] = static_cast<std::uint8_t>(lane_bit + 24);
      selector[3] = static_cast<std::uint8_t>(lane_bit + 24);
    }
  }
  return plan;
}

// What the plan relies on: vectors kPatterns apart have the same offsets
// within their windows, and a window never needs more than the bytes the
// kernels load (32 for 16 lanes, 16 for 8).
template <int Lanes>
constexpr bool exl3_window_plan_holds(int bits) {
  constexpr int patterns = Exl3WindowPlan<Lanes>::kPatterns;
  const auto offset = [bits](int m) {
    const int start = (Lanes * m + 1) * bits - 16;
    return start - 32 * (start < 0 ? -1 : start / 32);
  };
  for (int m = 0; m < Exl3WindowPlan<Lanes>::kVectors; ++m) {
    if (m >= patterns && offset(m) != offset(m - patterns)) return false;
    const int last_byte = (offset(m) + (Lanes - 1) * bits) / 8 + 2;
    if (last_byte >= 2 * Lanes) return false;
  }
  return true;
}

template <int Lanes>
constexpr bool exl3_window_plans_hold() {
  for (int bits = kExl3MinBits; bits <= kExl3MaxBits; ++bits)
    if (!exl3_window_plan_holds<Lanes>(bits)) return false;
  return true;
}
static_assert(exl3_window_plans_hold<16>() && exl3_window_plans_hold<8>());

template <int Lanes, int Bits>
struct Exl3Plan {
  static constexpr Exl3WindowPlan<Lanes> value = make_exl3_window_plan<Lanes>(Bits);
};

}  // namespace quire::kernels::linear_detail
