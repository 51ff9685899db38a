// EXL3 decode products with 256-bit registers (AVX2, FMA, F16C): the
// processors without AVX-512 (most desktop Intel ones) -- exl3_kernels.h.
//
// The same scheme as the 512-bit kernels (linear_exl3_wide.cpp) at half
// the width: a vector is 8 consecutive tile positions; its window (at most
// 4 stream words) is loaded with a masked load, broadcast to both 128-bit
// halves so that vpshufb, which permutes within each half, can gather each
// lane's three state bytes; vpsrlvd and a mask leave the state. Then
//  - MUL1 decode rows: vpmulld, the hashed state's bytes added in pairs to
//    16-bit sums and vpmaddwd with the 8-bit input widened to 16 bits (or
//    one vpdpbusd where the processor has AVX-VNNI);
//  - everything else: each lane's exact codebook value (MUL1's affine form,
//    or the two FP16 halves gathered with vpshufb, widened and added),
//    rounded to FP16 as exllamav3 rounds it, times its position's input.
// Vector v's positions lie in columns v / 4 and v / 4 + 8 of the tile
// (lanes 0-3 and 4-7), so four vectors add into each of eight accumulators.

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "exl3_kernels.h"
#include "exl3_window_plan.h"
#include "quire/kernels/cpu/exl3_trellis.h"
#include "quire/kernels/cpu/simd.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>
#define QUIRE_HAVE_EXL3_AVX2 1
#endif

namespace quire::kernels::linear_detail {

#ifdef QUIRE_HAVE_EXL3_AVX2

namespace {

constexpr int kVectors = 32;  // registers of 8 positions in a tile
constexpr int kPatterns = 4;

template <int Bits>
using Plan = Exl3Plan<8, Bits>;

// Each lane's input row by the vector's pattern (v % 4).
struct alignas(32) InputPlan {
  std::uint8_t byte_rows[kPatterns][32];  // four copies of the row per lane
  std::int32_t lane_rows[kPatterns][8];
};

InputPlan make_input_plan() {
  InputPlan plan{};
  for (int p = 0; p < kPatterns; ++p) {
    for (int lane = 0; lane < 8; ++lane) {
      const int row = exl3_tile_row(8 * p + lane);
      for (int b = 0; b < 4; ++b)
        plan.byte_rows[p][4 * lane + b] = static_cast<std::uint8_t>(row);
      plan.lane_rows[p][lane] = row;
    }
  }
  return plan;
}

#define QUIRE_EXL3_AVX2_TARGET __attribute__((target("avx2,fma,f16c")))
#define QUIRE_EXL3_AVX2_INLINE QUIRE_EXL3_AVX2_TARGET __attribute__((always_inline)) inline
#define QUIRE_EXL3_VNNI_TARGET __attribute__((target("avx2,fma,f16c,avxvnni")))
#define QUIRE_EXL3_VNNI_INLINE QUIRE_EXL3_VNNI_TARGET __attribute__((always_inline)) inline

struct Patterns {
  __m256i index[kPatterns];
  __m256i shift[kPatterns];
};

template <int Bits>
QUIRE_EXL3_AVX2_INLINE Patterns load_patterns() {
  const Exl3WindowPlan<8>& plan = Plan<Bits>::value;
  Patterns patterns;
  for (int p = 0; p < kPatterns; ++p) {
    // The window's 16 bytes are in both halves: the same indices in each.
    const __m128i index = _mm_loadu_si128(reinterpret_cast<const __m128i*>(plan.index[p]));
    const __m128i index_high =
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(plan.index[p] + 16));
    patterns.index[p] = _mm256_set_m128i(index_high, index);
    patterns.shift[p] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(plan.shift[p]));
  }
  return patterns;
}

template <int Bits>
QUIRE_EXL3_AVX2_INLINE std::uint32_t last_word(const std::uint32_t* words) {
  std::uint32_t last = 0;
  std::memcpy(&last, words + Plan<Bits>::value.words - 1, 4);
  return last;
}

constexpr __m128i load_mask(std::uint8_t words) {
  return __m128i{static_cast<long long>(((words & 1) != 0 ? 0xffffffffull : 0) |
                                        ((words & 2) != 0 ? 0xffffffff00000000ull : 0)),
                 static_cast<long long>(((words & 4) != 0 ? 0xffffffffull : 0) |
                                        ((words & 8) != 0 ? 0xffffffff00000000ull : 0))};
}

// The 8 states of vector V.
template <int Bits, int V>
QUIRE_EXL3_AVX2_INLINE __m256i tile_states(const std::uint32_t* words, std::uint32_t last,
                                           const Patterns& patterns) {
  constexpr int first = Plan<Bits>::value.first_word[V];
  constexpr __m128i mask = load_mask(Plan<Bits>::value.load_mask[V]);
  __m128i window;
  if constexpr (first < 0) {
    const __m128i loaded = _mm_maskload_epi32(reinterpret_cast<const int*>(words), mask);
    window = _mm_alignr_epi8(loaded, _mm_set1_epi32(int(last)), 12);
  } else {
    window = _mm_maskload_epi32(reinterpret_cast<const int*>(words + first), mask);
  }
  const __m256i bytes =
      _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(window), patterns.index[V % kPatterns]);
  return _mm256_and_si256(_mm256_srlv_epi32(bytes, patterns.shift[V % kPatterns]),
                          _mm256_set1_epi32(0xffff));
}

template <Exl3Codebook Codebook>
QUIRE_EXL3_AVX2_INLINE __m256i hashed(__m256i states) {
  if constexpr (Codebook == Exl3Codebook::three_inst) {
    const __m256i x = _mm256_add_epi32(_mm256_mullo_epi32(states, _mm256_set1_epi32(89226354)),
                                       _mm256_set1_epi32(64248484));
    return _mm256_xor_si256(_mm256_and_si256(x, _mm256_set1_epi32(int(0x8fff8fffu))),
                            _mm256_set1_epi32(0x3b603b60));
  } else if constexpr (Codebook == Exl3Codebook::mcg) {
    const __m256i x = _mm256_mullo_epi32(states, _mm256_set1_epi32(int(kExl3McgMultiplier)));
    return _mm256_xor_si256(_mm256_and_si256(x, _mm256_set1_epi32(int(0x8fff8fffu))),
                            _mm256_set1_epi32(0x3b603b60));
  } else {
    return _mm256_mullo_epi32(states, _mm256_set1_epi32(int(kExl3Mul1Multiplier)));
  }
}

// The bytes of each lane added in pairs: two 16-bit sums of at most 510.
QUIRE_EXL3_AVX2_INLINE __m256i byte_pairs(__m256i bytes) {
  const __m256i low_bytes = _mm256_set1_epi32(0x00ff00ff);
  return _mm256_add_epi16(_mm256_and_si256(bytes, low_bytes),
                          _mm256_and_si256(_mm256_srli_epi16(bytes, 8), low_bytes));
}

// Each lane's codebook value exactly as exllamav3 rounds it (see the
// 512-bit kernels' exact_values).
template <Exl3Codebook Codebook>
QUIRE_EXL3_AVX2_INLINE __m256 exact_values(__m256i hashes) {
  __m256 values;
  if constexpr (Codebook == Exl3Codebook::mul1) {
    const __m256i sums = _mm256_madd_epi16(byte_pairs(hashes), _mm256_set1_epi16(1));
    values = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sums), _mm256_set1_ps(exl3_mul1_scale()),
                             _mm256_set1_ps(exl3_mul1_offset()));
  } else {
    // Each lane's low halves, then its high halves, packed into 64 bits of
    // each 128-bit half and the halves joined.
    const __m256i pick = _mm256_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15, 0,
                                          1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15);
    const __m256i packed = _mm256_permute4x64_epi64(_mm256_shuffle_epi8(hashes, pick), 0xd8);
    const __m256 low = _mm256_cvtph_ps(_mm256_castsi256_si128(packed));
    const __m256 high = _mm256_cvtph_ps(_mm256_extracti128_si256(packed, 1));
    values = _mm256_add_ps(low, high);
  }
  return _mm256_cvtph_ps(_mm256_cvtps_ph(values, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

// The tiles a thread walks at a time, as the 512-bit kernels walk them.
constexpr int kBandTiles = 8;
constexpr std::int64_t kPrefetchRows = 2;

struct Band {
  const std::uint16_t* first = nullptr;
  std::int64_t row_stride = 0;
  std::int64_t rows = 0;
  int tiles = 0;
  int tile_words = 0;

  const std::uint32_t* tile(std::int64_t kt, int b) const {
    return reinterpret_cast<const std::uint32_t*>(first + kt * row_stride + b * tile_words);
  }
};

void prefetch_row(const Band& band, std::int64_t kt) {
  if (kt >= band.rows) return;
  const char* bytes = reinterpret_cast<const char*>(band.first + kt * band.row_stride);
  for (int offset = 0; offset < 2 * band.tiles * band.tile_words; offset += 64)
    __builtin_prefetch(bytes + offset);
}

struct RowInputs {
  const std::int8_t* integers = nullptr;
  const float* scales = nullptr;
  float offset = 0.0f;
  const float* rotated = nullptr;
  float* out = nullptr;
};

// Lanes 0-3 of an accumulator hold column c of the tile, 4-7 column c + 8.
QUIRE_EXL3_AVX2_INLINE void store_columns(__m256 sums, float scale, float offset, float* out,
                                          int c) {
  const __m128 low = _mm256_castps256_ps128(sums);
  const __m128 high = _mm256_extractf128_ps(sums, 1);
  const __m128 pairs = _mm_hadd_ps(low, high);  // l0+l1, l2+l3, h0+h1, h2+h3
  const __m128 both = _mm_hadd_ps(pairs, pairs);
  out[c] = scale * _mm_cvtss_f32(both) + offset;
  out[c + 8] = scale * _mm_cvtss_f32(_mm_shuffle_ps(both, both, 1)) + offset;
}

// MUL1 decode rows: the band's columns for one row, with 8-bit inputs.
// GCC inlines a function only into one with at least its target's
// instructions, so the AVX-VNNI and the plain AVX2 kernels are two
// functions, stamped from one definition (QUIRE_EXL3_MUL1_BAND).
template <int Bits, int V = 0>
QUIRE_EXL3_VNNI_INLINE void mul1_vectors_vnni(const std::uint32_t* words, std::uint32_t last,
                                              const Patterns& patterns, const __m256i* inputs,
                                              __m256i* acc) {
  if constexpr (V < kVectors) {
    const __m256i bytes = hashed<Exl3Codebook::mul1>(tile_states<Bits, V>(words, last, patterns));
    acc[V / 4] = _mm256_dpbusd_avx_epi32(acc[V / 4], bytes, inputs[V % kPatterns]);
    mul1_vectors_vnni<Bits, V + 1>(words, last, patterns, inputs, acc);
  }
}

template <int Bits, int V = 0>
QUIRE_EXL3_AVX2_INLINE void mul1_vectors_plain(const std::uint32_t* words, std::uint32_t last,
                                               const Patterns& patterns, const __m256i* inputs,
                                               __m256i* acc) {
  if constexpr (V < kVectors) {
    const __m256i bytes = hashed<Exl3Codebook::mul1>(tile_states<Bits, V>(words, last, patterns));
    acc[V / 4] = _mm256_add_epi32(
        acc[V / 4],
        _mm256_madd_epi16(byte_pairs(bytes), _mm256_srai_epi16(inputs[V % kPatterns], 8)));
    mul1_vectors_plain<Bits, V + 1>(words, last, patterns, inputs, acc);
  }
}

#define QUIRE_EXL3_MUL1_BAND(NAME, TARGET, VECTORS)                                              \
  template <int Bits>                                                                            \
  TARGET void NAME(const Band& band, const InputPlan& plan, const RowInputs& row,                \
                   std::int64_t first_column) {                                                  \
    alignas(32) __m256i sums[kBandTiles][8];                                                     \
    alignas(32) __m256 totals[kBandTiles][8];                                                    \
    for (int b = 0; b < band.tiles; ++b)                                                         \
      for (int c = 0; c < 8; ++c) {                                                              \
        sums[b][c] = _mm256_setzero_si256();                                                     \
        totals[b][c] = _mm256_setzero_ps();                                                      \
      }                                                                                          \
    const Patterns patterns = load_patterns<Bits>();                                             \
    const int rows_per_block = kExl3InputBlock / kExl3TileSide;                                  \
    for (std::int64_t kt = 0; kt < band.rows; ++kt) {                                            \
      prefetch_row(band, kt + kPrefetchRows);                                                    \
      const __m256i q = _mm256_broadcastsi128_si256(                                             \
          _mm_loadu_si128(reinterpret_cast<const __m128i*>(row.integers + kt * kExl3TileSide))); \
      __m256i inputs[kPatterns];                                                                 \
      for (int p = 0; p < kPatterns; ++p) {                                                      \
        inputs[p] = _mm256_shuffle_epi8(                                                         \
            q, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(plan.byte_rows[p])));         \
      }                                                                                          \
      for (int b = 0; b < band.tiles; ++b) {                                                     \
        const std::uint32_t* words = band.tile(kt, b);                                           \
        __m256i acc[8];                                                                          \
        for (int c = 0; c < 8; ++c)                                                              \
          acc[c] = sums[b][c];                                                                   \
        VECTORS<Bits>(words, last_word<Bits>(words), patterns, inputs, acc);                     \
        for (int c = 0; c < 8; ++c)                                                              \
          sums[b][c] = acc[c];                                                                   \
      }                                                                                          \
      if ((kt + 1) % rows_per_block != 0) continue;                                              \
      const __m256 scale = _mm256_set1_ps(row.scales[kt / rows_per_block]);                      \
      for (int b = 0; b < band.tiles; ++b) {                                                     \
        for (int c = 0; c < 8; ++c) {                                                            \
          totals[b][c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sums[b][c]), scale, totals[b][c]);   \
          sums[b][c] = _mm256_setzero_si256();                                                   \
        }                                                                                        \
      }                                                                                          \
    }                                                                                            \
    for (int b = 0; b < band.tiles; ++b) {                                                       \
      float* out = row.out + (first_column + b) * kExl3TileSide;                                 \
      for (int c = 0; c < 8; ++c)                                                                \
        store_columns(totals[b][c], exl3_mul1_scale(), row.offset, out, c);                      \
    }                                                                                            \
  }

QUIRE_EXL3_MUL1_BAND(mul1_band_vnni, QUIRE_EXL3_VNNI_TARGET, mul1_vectors_vnni)
QUIRE_EXL3_MUL1_BAND(mul1_band_plain, QUIRE_EXL3_AVX2_TARGET, mul1_vectors_plain)

// Float inputs: each lane's exact value times its input.
template <int Bits, Exl3Codebook Codebook, int V = 0>
QUIRE_EXL3_AVX2_INLINE void exact_vectors(const std::uint32_t* words, std::uint32_t last,
                                          const Patterns& patterns, const __m256* inputs,
                                          __m256* acc) {
  if constexpr (V < kVectors) {
    const __m256 values =
        exact_values<Codebook>(hashed<Codebook>(tile_states<Bits, V>(words, last, patterns)));
    acc[V / 4] = _mm256_fmadd_ps(values, inputs[V % kPatterns], acc[V / 4]);
    exact_vectors<Bits, Codebook, V + 1>(words, last, patterns, inputs, acc);
  }
}

template <int Bits, Exl3Codebook Codebook>
QUIRE_EXL3_AVX2_TARGET void exact_band(const Band& band, const InputPlan& plan,
                                       const RowInputs& row, std::int64_t first_column) {
  alignas(32) __m256 sums[kBandTiles][8];
  for (int b = 0; b < band.tiles; ++b)
    for (int c = 0; c < 8; ++c)
      sums[b][c] = _mm256_setzero_ps();
  const Patterns patterns = load_patterns<Bits>();
  __m256i lane_rows[kPatterns];
  for (int p = 0; p < kPatterns; ++p)
    lane_rows[p] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(plan.lane_rows[p]));
  for (std::int64_t kt = 0; kt < band.rows; ++kt) {
    prefetch_row(band, kt + kPrefetchRows);
    // Rows 0-7 and 8-15 of the tile's inputs, each lane's picked from
    // either half.
    const __m256 low = _mm256_loadu_ps(row.rotated + kt * kExl3TileSide);
    const __m256 high = _mm256_loadu_ps(row.rotated + kt * kExl3TileSide + 8);
    __m256 inputs[kPatterns];
    for (int p = 0; p < kPatterns; ++p) {
      const __m256i rows = lane_rows[p];
      const __m256 from_high = _mm256_castsi256_ps(_mm256_slli_epi32(rows, 28));
      inputs[p] = _mm256_blendv_ps(_mm256_permutevar8x32_ps(low, rows),
                                   _mm256_permutevar8x32_ps(high, rows), from_high);
    }
    for (int b = 0; b < band.tiles; ++b) {
      const std::uint32_t* words = band.tile(kt, b);
      __m256 acc[8];
      for (int c = 0; c < 8; ++c)
        acc[c] = sums[b][c];
      exact_vectors<Bits, Codebook>(words, last_word<Bits>(words), patterns, inputs, acc);
      for (int c = 0; c < 8; ++c)
        sums[b][c] = acc[c];
    }
  }
  for (int b = 0; b < band.tiles; ++b) {
    float* out = row.out + (first_column + b) * kExl3TileSide;
    for (int c = 0; c < 8; ++c)
      store_columns(sums[b][c], 1.0f, 0.0f, out, c);
  }
}

// AVX-VNNI, unless QUIRE_CPU_VNNI=0 asks for the kernels it replaces (so
// that a processor with it tests both).
bool processor_has_avx_vnni() {
  static const bool has = [] {
    if (const char* vnni = std::getenv("QUIRE_CPU_VNNI"); vnni && std::strcmp(vnni, "0") == 0) {
      return false;
    }
    // CPUID leaf 7, subleaf 1, EAX bit 4 (Clang 14's __builtin_cpu_supports
    // knows no "avxvnni").
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    return __get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx) != 0 && (eax & (1u << 4)) != 0;
  }();
  return has;
}

template <int Bits>
void run_band(const Exl3Weight& weight, const Exl3Inputs& in, const InputPlan& plan,
              const Band& band, std::int64_t first_column, int r, float* out) {
  RowInputs row;
  row.out = out + std::int64_t(r) * weight.padded_out;
  row.rotated = in.rotated.data() + std::int64_t(r) * weight.padded_in;
  if (weight.codebook == Exl3Codebook::mul1 && in.decode) {
    row.integers = in.integers.data() + std::int64_t(r) * weight.padded_in;
    row.scales = in.block_scales.data() + std::int64_t(r) * (weight.padded_in / kExl3InputBlock);
    row.offset = exl3_mul1_offset() * in.row_sums[std::size_t(r)];
    if (processor_has_avx_vnni()) {
      mul1_band_vnni<Bits>(band, plan, row, first_column);
    } else {
      mul1_band_plain<Bits>(band, plan, row, first_column);
    }
    return;
  }
  switch (weight.codebook) {
    case Exl3Codebook::mul1:
      return exact_band<Bits, Exl3Codebook::mul1>(band, plan, row, first_column);
    case Exl3Codebook::mcg:
      return exact_band<Bits, Exl3Codebook::mcg>(band, plan, row, first_column);
    case Exl3Codebook::three_inst:
      return exact_band<Bits, Exl3Codebook::three_inst>(band, plan, row, first_column);
  }
}

// A tile's exact values in position order.
template <int Bits, Exl3Codebook Codebook, int V = 0>
QUIRE_EXL3_AVX2_INLINE void decode_vectors(const std::uint32_t* words, std::uint32_t last,
                                           const Patterns& patterns, float* out) {
  if constexpr (V < kVectors) {
    _mm256_storeu_ps(
        out + 8 * V,
        exact_values<Codebook>(hashed<Codebook>(tile_states<Bits, V>(words, last, patterns))));
    decode_vectors<Bits, Codebook, V + 1>(words, last, patterns, out);
  }
}

template <int Bits, Exl3Codebook Codebook>
QUIRE_EXL3_AVX2_TARGET void decode_tile(const std::uint16_t* tile, float* out) {
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

template <int Bits>
void columns(const Exl3Weight& weight, const Exl3Inputs& inputs, std::int64_t tile_begin,
             std::int64_t tile_end, float* sums) {
  static const InputPlan plan = make_input_plan();
  Band band;
  band.tile_words = exl3_tile_words(weight.bits);
  band.row_stride = weight.padded_out / kExl3TileSide * band.tile_words;
  band.rows = weight.padded_in / kExl3TileSide;
  for (int r = 0; r < inputs.rows; ++r) {
    for (std::int64_t nt = tile_begin; nt < tile_end; nt += kBandTiles) {
      band.first = weight.trellis + nt * band.tile_words;
      band.tiles = static_cast<int>(std::min<std::int64_t>(kBandTiles, tile_end - nt));
      run_band<Bits>(weight, inputs, plan, band, nt, r, sums);
    }
  }
}

}  // namespace

bool exl3_avx2_supported() {
  static const bool supported = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && processor_has_f16c();
  }();
  return supported;
}

void exl3_avx2_columns(const Exl3Weight& weight, const Exl3Inputs& inputs, std::int64_t tile_begin,
                       std::int64_t tile_end, float* sums) {
  switch (weight.bits) {
    case 1:
      return columns<1>(weight, inputs, tile_begin, tile_end, sums);
    case 2:
      return columns<2>(weight, inputs, tile_begin, tile_end, sums);
    case 3:
      return columns<3>(weight, inputs, tile_begin, tile_end, sums);
    case 4:
      return columns<4>(weight, inputs, tile_begin, tile_end, sums);
    case 5:
      return columns<5>(weight, inputs, tile_begin, tile_end, sums);
    case 6:
      return columns<6>(weight, inputs, tile_begin, tile_end, sums);
    case 7:
      return columns<7>(weight, inputs, tile_begin, tile_end, sums);
    default:
      return columns<8>(weight, inputs, tile_begin, tile_end, sums);
  }
}

void exl3_avx2_decode_tile(const std::uint16_t* tile, int bits, Exl3Codebook codebook, float* out) {
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

bool exl3_avx2_supported() {
  return false;
}

void exl3_avx2_columns(const Exl3Weight&, const Exl3Inputs&, std::int64_t, std::int64_t, float*) {}

void exl3_avx2_decode_tile(const std::uint16_t*, int, Exl3Codebook, float*) {}

#endif

}  // namespace quire::kernels::linear_detail
