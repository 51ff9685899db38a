// EXL3 decode products with 512-bit registers (exl3_kernels.h).
//
// A tile is 256 positions in the tensor cores' order; sixteen consecutive
// positions (a "vector" m of the tile) are one register of 32-bit lanes. For
// each vector the packed words it needs (at most 6 of 32 bits) are loaded
// into a register, one byte permute (vpermb) gathers for every lane the
// three stream bytes that hold its 16-bit state, and a bit-offset byte
// select leaves the state. Everything about where a vector's bits lie depends
// only on the width and on m, so it is planned at compile time
// (exl3_window_plan.h). Per 16 weights that is a masked load, vpermb
// and vpmultishiftqb (which selects each lane's two state bytes at their
// bit offsets and zeros for the other two); then
//  - MUL1: vpmulld by the multiplier and one vpdpbusd, which multiplies the
//    four bytes of each hashed state by the lane's 8-bit input and adds them:
//    the input times the byte sum, in one instruction. The codebook is affine
//    in that sum, so the scale and offset are applied once per output;
//  - 3INST and MCG: vpmulld (and vpaddd), the mask-and-xor as one
//    vpternlogd, the two FP16 halves of each lane widened (vcvtph2ps) and
//    each multiplied by the lane's input (two FMAs): their sum is the
//    codebook value before its rounding to FP16.
// The positions of vectors 2c and 2c + 1 all lie in columns c and c + 8 of
// the tile, so both add into one accumulator: eight per tile and row.

#include <algorithm>
#include <cstring>

#include "exl3_kernels.h"
#include "exl3_window_plan.h"
#include "quire/kernels/cpu/exl3_trellis.h"

#if defined(__x86_64__) && defined(__GNUC__)
// GCC 12 takes the undefined upper halves of its own AVX-512 reductions for
// uninitialized values.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#define QUIRE_HAVE_EXL3_WIDE 1
#endif

namespace quire::kernels::linear_detail {

#ifdef QUIRE_HAVE_EXL3_WIDE

namespace {

constexpr int kVectors = 16;  // registers of 16 positions in a tile

template <int Bits>
using Plan = Exl3Plan<16, Bits>;

// Byte (int8 inputs) or float indices that give each lane of a vector of
// parity p the input of its position's row: rows depend on m only through
// m % 2.
struct alignas(64) InputPlan {
  std::uint8_t byte_rows[2][64];     // four copies of the row per 32-bit lane
  std::int32_t lane_rows[2][16];     // the row of each 32-bit lane
  std::int32_t half_rows[2][2][16];  // [parity][which FP16 half][float]: row of float f
};

InputPlan make_input_plan() {
  InputPlan plan;
  for (int parity = 0; parity < 2; ++parity) {
    for (int lane = 0; lane < 16; ++lane) {
      const int row = exl3_tile_row(16 * parity + lane);
      for (int b = 0; b < 4; ++b)
        plan.byte_rows[parity][4 * lane + b] = static_cast<std::uint8_t>(row);
      plan.lane_rows[parity][lane] = row;
    }
    // Widening the low 256 bits of a register of FP16 pairs gives lanes
    // 0-7's halves in turn (float f from lane f / 2), the high 256 bits
    // lanes 8-15's.
    for (int half = 0; half < 2; ++half) {
      for (int f = 0; f < 16; ++f)
        plan.half_rows[parity][half][f] = exl3_tile_row(16 * parity + 8 * half + f / 2);
    }
  }
  return plan;
}

#define QUIRE_EXL3_TARGET \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512vbmi,avx512vnni,avx2,fma,f16c")))
#define QUIRE_EXL3_INLINE QUIRE_EXL3_TARGET __attribute__((always_inline)) inline

// The window patterns of one width in registers.
struct Patterns {
  __m512i index[2];
  __m512i selector[2];
};

template <int Bits>
QUIRE_EXL3_INLINE Patterns load_patterns() {
  const Exl3WindowPlan<16>& plan = Plan<Bits>::value;
  return {{_mm512_load_si512(plan.index[0]), _mm512_load_si512(plan.index[1])},
          {_mm512_load_si512(plan.selector[0]), _mm512_load_si512(plan.selector[1])}};
}

// The 16 states of vector M of a tile: a masked load of the words it needs
// (never beyond the tile, so never beyond the tensor), the byte permute and
// the byte select.
template <int Bits, int M>
QUIRE_EXL3_INLINE __m512i tile_states(const std::uint32_t* words, std::uint32_t last,
                                      const Patterns& patterns) {
  constexpr int first = Plan<Bits>::value.first_word[M];
  // A 512-bit masked load zeroes the rest of the register itself (a 256-bit
  // one left a move to widen it for vpermb).
  constexpr auto mask = static_cast<__mmask16>(Plan<Bits>::value.load_mask[M]);
  __m512i window;
  if constexpr (first < 0) {
    window = _mm512_maskz_alignr_epi32(0x00ff, _mm512_maskz_loadu_epi32(mask, words),
                                       _mm512_set1_epi32(int(last)), 15);
  } else {
    window = _mm512_maskz_loadu_epi32(mask, words + first);
  }
  // Byte 3 of each lane cleared, so that the selectors of bytes 2 and 3
  // read zeros.
  constexpr auto kLowThreeBytes = static_cast<__mmask64>(0x7777777777777777ull);
  const __m512i bytes =
      _mm512_maskz_permutexvar_epi8(kLowThreeBytes, patterns.index[M % 2], window);
  return _mm512_multishift_epi64_epi8(patterns.selector[M % 2], bytes);
}

template <Exl3Codebook Codebook>
QUIRE_EXL3_INLINE __m512i hashed(__m512i states) {
  if constexpr (Codebook == Exl3Codebook::three_inst) {
    const __m512i x = _mm512_add_epi32(_mm512_mullo_epi32(states, _mm512_set1_epi32(89226354)),
                                       _mm512_set1_epi32(64248484));
    return _mm512_ternarylogic_epi32(x, _mm512_set1_epi32(int(0x8fff8fffu)),
                                     _mm512_set1_epi32(0x3b603b60), 0x6a);
  } else if constexpr (Codebook == Exl3Codebook::mcg) {
    const __m512i x = _mm512_mullo_epi32(states, _mm512_set1_epi32(int(kExl3McgMultiplier)));
    return _mm512_ternarylogic_epi32(x, _mm512_set1_epi32(int(0x8fff8fffu)),
                                     _mm512_set1_epi32(0x3b603b60), 0x6a);
  } else {
    return _mm512_mullo_epi32(states, _mm512_set1_epi32(int(kExl3Mul1Multiplier)));
  }
}

// The byte sums' products with 8-bit inputs (the same input in all four
// bytes of a lane): vpdpbusd, or without VNNI the bytes added in pairs to
// 16-bit sums (at most 510) and vpmaddwd with the input widened to 16 bits
// (vpmaddubsw would saturate its 16-bit sums of two byte products).
template <bool Vnni>
QUIRE_EXL3_INLINE __m512i add_byte_products(__m512i sum, __m512i bytes, __m512i inputs) {
  if constexpr (Vnni) {
    return _mm512_dpbusd_epi32(sum, bytes, inputs);
  } else {
    const __m512i low_bytes = _mm512_set1_epi32(0x00ff00ff);
    const __m512i pairs =
        _mm512_add_epi16(_mm512_and_si512(bytes, low_bytes),
                         _mm512_and_si512(_mm512_srli_epi16(bytes, 8), low_bytes));
    return _mm512_add_epi32(sum, _mm512_madd_epi16(pairs, _mm512_srai_epi16(inputs, 8)));
  }
}

// Lanes 0-3 and 8-11 of an integer accumulator belong to column c of the
// tile, 4-7 and 12-15 to column c + 8; lanes 0-7 of a float accumulator to
// c, 8-15 to c + 8.
constexpr std::uint16_t kLowColumnLanesInt = 0x0f0f;
constexpr std::uint16_t kLowColumnLanesFloat = 0x00ff;

// The tiles a thread multiplies at a time: a band of neighbouring column
// tiles, walked one row of tiles after the other. A column's own tiles lie a
// whole row of tiles apart (kilobytes); walked down a column, every tile was
// a miss the prefetchers could not foresee, and where a layer's memory is
// physically contiguous (huge pages) the tiles of a column also fell on the
// same cache sets and memory banks: the 96M shape's decode ran three times
// slower there than from scattered pages. A band's row is one run of
// contiguous bytes (8 tiles: 1 KiB at 4 bits); its sums live in a small
// array between rows.
constexpr int kBandTiles = 8;
// Rows of tiles fetched ahead: each row is about 100 ns of work.
constexpr std::int64_t kPrefetchRows = 2;
// Rows of tiles a tile's accumulators take in registers between their load
// and store (for one input row; R rows take kPassRows / R): the kernels are
// bound by the count of 512-bit operations, of which the accumulators'
// moves were a sixth at one row of tiles a pass.
constexpr int kPassRows = 4;

struct Band {
  const std::uint16_t* first = nullptr;  // tile (0, the band's first column)
  std::int64_t row_stride = 0;           // FP16-sized words from a row of tiles to the next
  std::int64_t rows = 0;                 // rows of tiles: Kp / 16
  int tiles = 0;                         // columns of tiles in the band
  int tile_words = 0;                    // FP16-sized words per tile

  const std::uint32_t* tile(std::int64_t kt, int b) const {
    return reinterpret_cast<const std::uint32_t*>(first + kt * row_stride + b * tile_words);
  }
};

QUIRE_EXL3_INLINE void prefetch_row(const Band& band, std::int64_t kt) {
  if (kt >= band.rows) return;
  const char* bytes = reinterpret_cast<const char*>(band.first + kt * band.row_stride);
  for (int offset = 0; offset < 2 * band.tiles * band.tile_words; offset += 64)
    _mm_prefetch(bytes + offset, _MM_HINT_T0);
}

template <int Bits>
QUIRE_EXL3_INLINE std::uint32_t last_word(const std::uint32_t* words) {
  std::uint32_t last = 0;
  std::memcpy(&last, words + Plan<Bits>::value.words - 1, 4);
  return last;
}

// Each row's inputs for one row of tiles and its output row.
template <int R>
struct RowInputs {
  const std::int8_t* integers[R];  // MUL1
  const float* scales[R];          // MUL1: per block of 128
  float offsets[R];                // MUL1: the offset times the row's sum of inputs
  const float* rotated[R];         // 3INST, MCG
  float* out[R];                   // the row's sums, [Np]
};

// The sixteen vectors of one MUL1 tile into R rows' sums (unrolled: each
// vector's window is known at compile time).
template <int Bits, int R, bool Vnni, int M = 0>
QUIRE_EXL3_INLINE void mul1_vectors(const std::uint32_t* words, std::uint32_t last,
                                    const Patterns& patterns, const __m512i (*inputs)[2],
                                    __m512i (*acc)[8]) {
  if constexpr (M < kVectors) {
    const __m512i bytes = hashed<Exl3Codebook::mul1>(tile_states<Bits, M>(words, last, patterns));
    for (int r = 0; r < R; ++r)
      acc[r][M / 2] = add_byte_products<Vnni>(acc[r][M / 2], bytes, inputs[r][M % 2]);
    mul1_vectors<Bits, R, Vnni, M + 1>(words, last, patterns, inputs, acc);
  }
}

// Each lane's codebook value exactly as exllamav3 rounds it: MUL1's affine
// form in the byte sum (exact in float, as the FMA's single rounding
// computes it), 3INST's and MCG's two halves added (exact in float), then
// rounded to FP16.
template <Exl3Codebook Codebook>
QUIRE_EXL3_INLINE __m512 exact_values(__m512i hashes) {
  __m512 values;
  if constexpr (Codebook == Exl3Codebook::mul1) {
    const __m512i byte_sums =
        _mm512_dpbusd_epi32(_mm512_setzero_si512(), hashes, _mm512_set1_epi32(0x01010101));
    values = _mm512_fmadd_ps(_mm512_cvtepi32_ps(byte_sums), _mm512_set1_ps(exl3_mul1_scale()),
                             _mm512_set1_ps(exl3_mul1_offset()));
  } else {
    const __m512 low = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(hashes));
    const __m512 high = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_srli_epi32(hashes, 16)));
    values = _mm512_add_ps(low, high);
  }
  return _mm512_cvtph_ps(_mm512_cvtps_ph(values, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

// The sixteen vectors of one tile into R rows' float sums. Exact: each
// lane's value (exact_values) times its position's input. Otherwise (decode
// rows of 3INST and MCG) each lane's two FP16 halves are widened and
// multiplied by the input apiece, which skips the sum's rounding to FP16
// (half a unit in its last place, 2^-11 relative) for four fewer
// instructions per vector.
template <int Bits, int R, Exl3Codebook Codebook, bool Exact, int M = 0>
QUIRE_EXL3_INLINE void float_vectors(const std::uint32_t* words, std::uint32_t last,
                                     const Patterns& patterns, const __m512 (*inputs)[2][2],
                                     __m512 (*acc)[8]) {
  if constexpr (M < kVectors) {
    const __m512i hashes = hashed<Codebook>(tile_states<Bits, M>(words, last, patterns));
    if constexpr (Exact) {
      const __m512 values = exact_values<Codebook>(hashes);
      for (int r = 0; r < R; ++r)
        acc[r][M / 2] = _mm512_fmadd_ps(values, inputs[r][M % 2][0], acc[r][M / 2]);
    } else {
      const __m512 low = _mm512_cvtph_ps(_mm512_castsi512_si256(hashes));
      const __m512 high = _mm512_cvtph_ps(_mm512_extracti64x4_epi64(hashes, 1));
      for (int r = 0; r < R; ++r) {
        acc[r][M / 2] = _mm512_fmadd_ps(low, inputs[r][M % 2][0], acc[r][M / 2]);
        acc[r][M / 2] = _mm512_fmadd_ps(high, inputs[r][M % 2][1], acc[r][M / 2]);
      }
    }
    float_vectors<Bits, R, Codebook, Exact, M + 1>(words, last, patterns, inputs, acc);
  }
}

// MUL1: the band's columns for R rows.
template <int Bits, int R, bool Vnni>
QUIRE_EXL3_TARGET void mul1_band(const Band& band, const InputPlan& inputs_plan,
                                 const RowInputs<R>& rows, std::int64_t first_column) {
  constexpr int kTiles = kBandTiles / R;
  alignas(64) __m512i sums[kTiles][R][8];
  alignas(64) float totals[kTiles][R][8][16];
  for (int b = 0; b < band.tiles; ++b)
    for (int r = 0; r < R; ++r)
      for (int c = 0; c < 8; ++c) {
        sums[b][r][c] = _mm512_setzero_si512();
        _mm512_store_ps(totals[b][r][c], _mm512_setzero_ps());
      }
  const Patterns patterns = load_patterns<Bits>();
  const __m512i byte_rows[2] = {_mm512_load_si512(inputs_plan.byte_rows[0]),
                                _mm512_load_si512(inputs_plan.byte_rows[1])};
  const int rows_per_block = kExl3InputBlock / kExl3TileSide;
  constexpr int kPass = kPassRows / R;
  static_assert((kExl3InputBlock / kExl3TileSide) % kPass == 0, "passes end with blocks");
  for (std::int64_t kt = 0; kt < band.rows; kt += kPass) {
    for (int p = 0; p < kPass; ++p)
      prefetch_row(band, kt + kPass + p);
    __m512i inputs[kPass][R][2];
    for (int p = 0; p < kPass; ++p) {
      for (int r = 0; r < R; ++r) {
        const __m512i q = _mm512_castsi128_si512(_mm_loadu_si128(
            reinterpret_cast<const __m128i*>(rows.integers[r] + (kt + p) * kExl3TileSide)));
        inputs[p][r][0] = _mm512_permutexvar_epi8(byte_rows[0], q);
        inputs[p][r][1] = _mm512_permutexvar_epi8(byte_rows[1], q);
      }
    }
    for (int b = 0; b < band.tiles; ++b) {
      __m512i acc[R][8];
      for (int r = 0; r < R; ++r)
        for (int c = 0; c < 8; ++c)
          acc[r][c] = sums[b][r][c];
#pragma GCC unroll 8
      for (int p = 0; p < kPass; ++p) {
        const std::uint32_t* words = band.tile(kt + p, b);
        mul1_vectors<Bits, R, Vnni>(words, last_word<Bits>(words), patterns, inputs[p], acc);
      }
      for (int r = 0; r < R; ++r)
        for (int c = 0; c < 8; ++c)
          sums[b][r][c] = acc[r][c];
    }
    if ((kt + kPass) % rows_per_block != 0) continue;
    // A block of 128 inputs ends: its sums join the totals at its scale.
    for (int r = 0; r < R; ++r) {
      const __m512 scale = _mm512_set1_ps(rows.scales[r][kt / rows_per_block]);
      for (int b = 0; b < band.tiles; ++b) {
        for (int c = 0; c < 8; ++c) {
          const __m512 total = _mm512_load_ps(totals[b][r][c]);
          _mm512_store_ps(totals[b][r][c],
                          _mm512_fmadd_ps(_mm512_cvtepi32_ps(sums[b][r][c]), scale, total));
          sums[b][r][c] = _mm512_setzero_si512();
        }
      }
    }
  }
  const float a = exl3_mul1_scale();
  for (int r = 0; r < R; ++r) {
    for (int b = 0; b < band.tiles; ++b) {
      float* out = rows.out[r] + (first_column + b) * kExl3TileSide;
      for (int c = 0; c < 8; ++c) {
        const __m512 total = _mm512_load_ps(totals[b][r][c]);
        out[c] = a * _mm512_mask_reduce_add_ps(kLowColumnLanesInt, total) + rows.offsets[r];
        out[c + 8] = a * _mm512_mask_reduce_add_ps(std::uint16_t(~kLowColumnLanesInt), total) +
                     rows.offsets[r];
      }
    }
  }
}

// The band's columns for R rows with float inputs: every codebook's prompt
// rows (Exact), 3INST's and MCG's decode rows.
template <int Bits, int R, Exl3Codebook Codebook, bool Exact>
QUIRE_EXL3_TARGET void float_band(const Band& band, const InputPlan& inputs_plan,
                                  const RowInputs<R>& rows, std::int64_t first_column) {
  constexpr int kTiles = kBandTiles / R;
  alignas(64) __m512 sums[kTiles][R][8];
  for (int b = 0; b < band.tiles; ++b)
    for (int r = 0; r < R; ++r)
      for (int c = 0; c < 8; ++c)
        sums[b][r][c] = _mm512_setzero_ps();
  const Patterns patterns = load_patterns<Bits>();
  // Each lane's input (exact values), or each FP16 half's.
  __m512i input_rows[2][2];
  for (int p = 0; p < 2; ++p) {
    for (int h = 0; h < 2; ++h) {
      input_rows[p][h] = Exact ? _mm512_load_si512(inputs_plan.lane_rows[p])
                               : _mm512_load_si512(inputs_plan.half_rows[p][h]);
    }
  }
  for (std::int64_t kt = 0; kt < band.rows; ++kt) {
    prefetch_row(band, kt + kPrefetchRows);
    __m512 inputs[R][2][2];
    for (int r = 0; r < R; ++r) {
      const __m512 x = _mm512_loadu_ps(rows.rotated[r] + kt * kExl3TileSide);
      for (int p = 0; p < 2; ++p)
        for (int h = 0; h < 2; ++h)
          inputs[r][p][h] = _mm512_permutexvar_ps(input_rows[p][h], x);
    }
    for (int b = 0; b < band.tiles; ++b) {
      const std::uint32_t* words = band.tile(kt, b);
      __m512 acc[R][8];
      for (int r = 0; r < R; ++r)
        for (int c = 0; c < 8; ++c)
          acc[r][c] = sums[b][r][c];
      float_vectors<Bits, R, Codebook, Exact>(words, last_word<Bits>(words), patterns, inputs, acc);
      for (int r = 0; r < R; ++r)
        for (int c = 0; c < 8; ++c)
          sums[b][r][c] = acc[r][c];
    }
  }
  // Exact sums' lanes are positions (as the integer kernel's); the others'
  // are FP16 halves, eight positions' pairs per column.
  constexpr std::uint16_t low_lanes = Exact ? kLowColumnLanesInt : kLowColumnLanesFloat;
  for (int r = 0; r < R; ++r) {
    for (int b = 0; b < band.tiles; ++b) {
      float* out = rows.out[r] + (first_column + b) * kExl3TileSide;
      for (int c = 0; c < 8; ++c) {
        out[c] = _mm512_mask_reduce_add_ps(low_lanes, sums[b][r][c]);
        out[c + 8] = _mm512_mask_reduce_add_ps(std::uint16_t(~low_lanes), sums[b][r][c]);
      }
    }
  }
}

// Decode rows take the fast kernels (MUL1's integers, the others' unrounded
// halves), prompt rows the exact values.
template <int Bits, int R>
void run_codebook(Exl3Codebook codebook, bool decode, const Band& band,
                  const InputPlan& inputs_plan, const RowInputs<R>& rows,
                  std::int64_t first_column) {
  switch (codebook) {
    case Exl3Codebook::mul1:
      if (!decode) {
        float_band<Bits, R, Exl3Codebook::mul1, true>(band, inputs_plan, rows, first_column);
      } else if (exl3_wide_vnni()) {
        mul1_band<Bits, R, true>(band, inputs_plan, rows, first_column);
      } else {
        mul1_band<Bits, R, false>(band, inputs_plan, rows, first_column);
      }
      break;
    case Exl3Codebook::mcg:
      if (decode) {
        float_band<Bits, R, Exl3Codebook::mcg, false>(band, inputs_plan, rows, first_column);
      } else {
        float_band<Bits, R, Exl3Codebook::mcg, true>(band, inputs_plan, rows, first_column);
      }
      break;
    case Exl3Codebook::three_inst:
      if (decode) {
        float_band<Bits, R, Exl3Codebook::three_inst, false>(band, inputs_plan, rows, first_column);
      } else {
        float_band<Bits, R, Exl3Codebook::three_inst, true>(band, inputs_plan, rows, first_column);
      }
      break;
  }
}

// One band of columns for rows [first, first + R).
template <int R>
void run_band(const Exl3Weight& weight, const Exl3Inputs& in, const InputPlan& inputs_plan,
              const Band& band, std::int64_t first_column, int first, float* out) {
  const std::int64_t blocks = weight.padded_in / kExl3InputBlock;
  RowInputs<R> rows{};
  for (int r = 0; r < R; ++r) {
    const std::int64_t row = first + r;
    rows.out[r] = out + row * weight.padded_out;
    rows.rotated[r] = in.rotated.data() + row * weight.padded_in;
    if (weight.codebook == Exl3Codebook::mul1 && in.decode) {
      rows.offsets[r] = exl3_mul1_offset() * in.row_sums[std::size_t(row)];
      rows.integers[r] = in.integers.data() + row * weight.padded_in;
      rows.scales[r] = in.block_scales.data() + row * blocks;
    }
  }
  switch (weight.bits) {
    case 1:
      return run_codebook<1, R>(weight.codebook, in.decode, band, inputs_plan, rows, first_column);
    case 2:
      return run_codebook<2, R>(weight.codebook, in.decode, band, inputs_plan, rows, first_column);
    case 3:
      return run_codebook<3, R>(weight.codebook, in.decode, band, inputs_plan, rows, first_column);
    case 4:
      return run_codebook<4, R>(weight.codebook, in.decode, band, inputs_plan, rows, first_column);
    case 5:
      return run_codebook<5, R>(weight.codebook, in.decode, band, inputs_plan, rows, first_column);
    case 6:
      return run_codebook<6, R>(weight.codebook, in.decode, band, inputs_plan, rows, first_column);
    case 7:
      return run_codebook<7, R>(weight.codebook, in.decode, band, inputs_plan, rows, first_column);
    default:
      return run_codebook<8, R>(weight.codebook, in.decode, band, inputs_plan, rows, first_column);
  }
}

// A tile's exact values in position order, for the batched products.
template <int Bits, Exl3Codebook Codebook, int M = 0>
QUIRE_EXL3_INLINE void decode_vectors(const std::uint32_t* words, std::uint32_t last,
                                      const Patterns& patterns, float* out) {
  if constexpr (M < kVectors) {
    _mm512_storeu_ps(
        out + 16 * M,
        exact_values<Codebook>(hashed<Codebook>(tile_states<Bits, M>(words, last, patterns))));
    decode_vectors<Bits, Codebook, M + 1>(words, last, patterns, out);
  }
}

template <int Bits, Exl3Codebook Codebook>
QUIRE_EXL3_TARGET void decode_tile(const std::uint16_t* tile, float* out) {
  const auto* words = reinterpret_cast<const std::uint32_t*>(tile);
  decode_vectors<Bits, Codebook>(words, last_word<Bits>(words), load_patterns<Bits>(), out);
}

template <int Bits>
void decode_tile_of(const std::uint16_t* tile, Exl3Codebook codebook, float* out) {
  switch (codebook) {
    case Exl3Codebook::mul1:
      return decode_tile<Bits, Exl3Codebook::mul1>(tile, out);
    case Exl3Codebook::mcg:
      return decode_tile<Bits, Exl3Codebook::mcg>(tile, out);
    case Exl3Codebook::three_inst:
      return decode_tile<Bits, Exl3Codebook::three_inst>(tile, out);
  }
}

}  // namespace

bool exl3_wide_supported() {
  static const bool supported = [] {
    __builtin_cpu_init();
    // The kernels are compiled for VNNI too; the two-step MUL1 sums
    // (QUIRE_CPU_VNNI=0) are for comparing them on the same processor.
    // Every AVX-512 processor has F16C (which Clang 14's
    // __builtin_cpu_supports does not name).
    return wide_vectors_allowed() && __builtin_cpu_supports("avx512vbmi") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni");
  }();
  return supported;
}

bool exl3_wide_vnni() {
  return wide_vnni_allowed();
}

void exl3_wide_columns(const Exl3Weight& weight, const Exl3Inputs& inputs, std::int64_t tile_begin,
                       std::int64_t tile_end, float* sums) {
  static const InputPlan inputs_plan = make_input_plan();
  const std::int64_t tiles_n = weight.padded_out / kExl3TileSide;
  Band band;
  band.tile_words = exl3_tile_words(weight.bits);
  band.row_stride = tiles_n * band.tile_words;
  band.rows = weight.padded_in / kExl3TileSide;
  int row = 0;
  // Pairs of rows share each decoded vector; their sums take twice the room,
  // so their bands are half as wide.
  for (; row + 2 <= inputs.rows; row += 2) {
    for (std::int64_t nt = tile_begin; nt < tile_end; nt += kBandTiles / 2) {
      band.first = weight.trellis + nt * band.tile_words;
      band.tiles = static_cast<int>(std::min<std::int64_t>(kBandTiles / 2, tile_end - nt));
      run_band<2>(weight, inputs, inputs_plan, band, nt, row, sums);
    }
  }
  if (row < inputs.rows) {
    for (std::int64_t nt = tile_begin; nt < tile_end; nt += kBandTiles) {
      band.first = weight.trellis + nt * band.tile_words;
      band.tiles = static_cast<int>(std::min<std::int64_t>(kBandTiles, tile_end - nt));
      run_band<1>(weight, inputs, inputs_plan, band, nt, row, sums);
    }
  }
}

void exl3_wide_decode_tile(const std::uint16_t* tile, int bits, Exl3Codebook codebook, float* out) {
  switch (bits) {
    case 1:
      return decode_tile_of<1>(tile, codebook, out);
    case 2:
      return decode_tile_of<2>(tile, codebook, out);
    case 3:
      return decode_tile_of<3>(tile, codebook, out);
    case 4:
      return decode_tile_of<4>(tile, codebook, out);
    case 5:
      return decode_tile_of<5>(tile, codebook, out);
    case 6:
      return decode_tile_of<6>(tile, codebook, out);
    case 7:
      return decode_tile_of<7>(tile, codebook, out);
    default:
      return decode_tile_of<8>(tile, codebook, out);
  }
}

#else

bool exl3_wide_supported() {
  return false;
}

bool exl3_wide_vnni() {
  return false;
}

void exl3_wide_columns(const Exl3Weight&, const Exl3Inputs&, std::int64_t, std::int64_t, float*) {}

void exl3_wide_decode_tile(const std::uint16_t*, int, Exl3Codebook, float*) {}

#endif

}  // namespace quire::kernels::linear_detail
