// The tiles of batched EXL2 products (prefill) in integer arithmetic, with
// AVX-512 VNNI.
//
// The float tiles (linear_exl2.cpp) widen every weight to float and multiply
// it with one FMA per eight (AVX2) or sixteen (AVX-512) products. Here the
// inputs are the 16-bit integers of the decode kernel
// (linear_exl2_integer_inputs.cpp: one scale per group and input row), the
// weights stay 16-bit integers, and vpdpwssd multiplies two pairs of them and
// adds both products to a 32-bit sum: thirty-two products per instruction,
// twice the FMA's sixteen, with no conversion of the weights. Zen 4 and the
// Intel server cores run one such instruction per cycle on 512 bits, as they
// do the FMA.
//
// Per group, the 32-column tile's weights are unpacked once into signed
// 16-bit pairs (q - zero) in the pair order of exl2_integer_layout.h, and
// then multiplied with every input row of the row block, twelve rows at a
// time: 24 registers of sums (12 rows x 2 vectors of 16 columns), the two
// weight vectors of a pair loaded once for the twelve rows. At the end of a
// group each row's sums are scaled as add_group scales them
// (linear_exl2_integer.cpp): value = input scale * float(sum), then
// out = fma(weight scale, value, out).
//
// Exactness: with q - zero in [-128, 127] and inputs in [-32767, 32767], a
// group of at most 512 rows (kChunkRows) sums to less than 2^31 in
// magnitude, so the 32-bit sums are exact and a row's outputs do not depend
// on the rows beside it. Groups that are longer, or not whole 32-row blocks,
// take the float tiles (exl2_batched_integer_takes).

#include <algorithm>
#include <stdexcept>

#include "exl2_integer_layout.h"
#include "linear_internal.h"
#include "packed_values.h"
#include "quire/kernels/cpu/exl2_scale.h"
#include "quire/kernels/cpu/simd.h"

#if defined(__x86_64__) && defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#include "quire/kernels/cpu/pair_products.h"
#include "wide_packed_values.h"
#define QUIRE_HAVE_EXL2_BATCHED_INTEGER 1
#endif

namespace quire::kernels::linear_detail {

bool exl2_batched_integer_takes(const Exl2Weight& weight) {
  return std::all_of(weight.groups.begin(), weight.groups.end(), [](const Exl2Group& group) {
    return group.rows > 0 && group.rows % 32 == 0 && group.rows <= kChunkRows;
  });
}

#ifdef QUIRE_HAVE_EXL2_BATCHED_INTEGER

#define QUIRE_VNNI \
  __attribute__((target("avx512f,avx512bw,avx512vnni,avx2,fma"), always_inline)) inline

namespace {

using wide_values::value_high;
using wide_values::value_low;

// Pair P of a block as two signed 16-bit weights q - zero per lane.
template <int Bits, int P>
QUIRE_VNNI __m512i signed_pair(const __m512i* w) {
  constexpr int low = kPairs<Bits>[P].low * Bits;
  constexpr int high = kPairs<Bits>[P].high * Bits;
  __m512i pair;
  if constexpr (high - low == 16 && low / 32 == (high + Bits - 1) / 32) {
    constexpr std::uint32_t mask = kValueMask<Bits> | (kValueMask<Bits> << 16);
    pair = _mm512_and_si512(_mm512_srli_epi32(w[low / 32], low % 32), _mm512_set1_epi32(int(mask)));
  } else {
    pair = _mm512_or_si512(value_low<Bits, low>(w), value_high<Bits, high>(w));
  }
  return _mm512_sub_epi16(pair, _mm512_set1_epi16(std::int16_t(1 << (Bits - 1))));
}

template <int Bits, int P>
QUIRE_VNNI void store_pairs(const __m512i* w, std::int32_t* pairs) {
  if constexpr (P < 16) {
    _mm512_storeu_si512(pairs + P * kWideTile, signed_pair<Bits, P>(w));
    store_pairs<Bits, P + 1>(w, pairs);
  }
}

// pairs[p * 32 + c] = pair p of the group's rows for the tile's column c.
template <int Bits>
QUIRE_VNNI void unpack_group(const std::uint32_t* words, std::int64_t stride, int rows,
                             std::int32_t* pairs) {
  for (int k = 0; k < rows; k += 32) {
    const std::uint32_t* block = words + std::int64_t(k / 32) * Bits * stride;
    for (int v = 0; v < 2; ++v) {
      __m512i w[Bits];
#pragma GCC unroll 8
      for (int b = 0; b < Bits; ++b)
        w[b] = _mm512_loadu_si512(block + b * stride + v * 16);
      store_pairs<Bits, 0>(w, pairs + (k / 2) * kWideTile + v * 16);
    }
  }
}

QUIRE_VNNI void unpack_any_group(const Exl2Group& group, const std::uint32_t* words,
                                 std::int64_t stride, std::int32_t* pairs) {
  switch (group.bits) {
    case 2:
      unpack_group<2>(words, stride, group.rows, pairs);
      break;
    case 3:
      unpack_group<3>(words, stride, group.rows, pairs);
      break;
    case 4:
      unpack_group<4>(words, stride, group.rows, pairs);
      break;
    case 5:
      unpack_group<5>(words, stride, group.rows, pairs);
      break;
    case 6:
      unpack_group<6>(words, stride, group.rows, pairs);
      break;
    default:
      unpack_group<8>(words, stride, group.rows, pairs);
      break;
  }
}

// What a group's rows share for one tile: its unpacked weights, the scale of
// each of its 32 columns, where its inputs start.
struct GroupTile {
  const std::int32_t* pairs;  // [pair][32]
  int pair_count;
  __m512 scale[2];
  std::size_t group;
  std::int64_t first_pair;  // in each row's inputs
};

// acc[r][0, 32) += the group's products for R input rows: the 32-bit sums
// in registers over every pair, then scaled once.
template <int R>
QUIRE_VNNI void multiply_rows(const GroupTile& tile, const Exl2IntegerInputs& inputs,
                              std::int64_t first_row, std::size_t groups, float* acc) {
  __m512i sum[R][2];
#pragma GCC unroll 12
  for (int r = 0; r < R; ++r) {
    sum[r][0] = _mm512_setzero_si512();
    sum[r][1] = _mm512_setzero_si512();
  }
  const std::int32_t* x = inputs.pairs.data() + first_row * inputs.half_features + tile.first_pair;
  const std::int64_t stride = inputs.half_features;
  for (int p = 0; p < tile.pair_count; ++p) {
    const __m512i low = _mm512_loadu_si512(tile.pairs + p * kWideTile);
    const __m512i high = _mm512_loadu_si512(tile.pairs + p * kWideTile + 16);
#pragma GCC unroll 12
    for (int r = 0; r < R; ++r) {
      const __m512i input = _mm512_set1_epi32(x[r * stride + p]);
      sum[r][0] = add_pair_products(sum[r][0], low, input);
      sum[r][1] = add_pair_products(sum[r][1], high, input);
    }
  }
#pragma GCC unroll 12
  for (int r = 0; r < R; ++r) {
    const __m512 input_scale =
        _mm512_set1_ps(inputs.scales[std::size_t(first_row + r) * groups + tile.group]);
    float* out = acc + r * kWideTile;
#pragma GCC unroll 2
    for (int v = 0; v < 2; ++v) {
      const __m512 value = _mm512_mul_ps(input_scale, _mm512_cvtepi32_ps(sum[r][v]));
      _mm512_storeu_ps(out + v * 16,
                       _mm512_fmadd_ps(tile.scale[v], value, _mm512_loadu_ps(out + v * 16)));
    }
  }
}

constexpr int kBlockRows = 12;

template <int R>
QUIRE_VNNI void multiply_rest(const GroupTile& tile, const Exl2IntegerInputs& inputs,
                              std::int64_t first_row, int rows, std::size_t groups, float* acc) {
  if constexpr (R > 0) {
    if (rows == R) {
      multiply_rows<R>(tile, inputs, first_row, groups, acc);
    } else {
      multiply_rest<R - 1>(tile, inputs, first_row, rows, groups, acc);
    }
  }
}

// The scales of the tile's 32 columns for group g (see wide_add_group).
QUIRE_VNNI void column_scales(const Exl2Weight& weight, std::int64_t stride, std::size_t g,
                              std::int64_t begin, __m512* scale) {
  alignas(64) float table[16];
  exl2_scale_table(weight.q_scale_max[g], table);
  const __m512 scale_table = _mm512_load_ps(table);
  const std::uint32_t* codes = weight.q_scale + std::int64_t(g) * (stride / 8) + begin / 8;
  const __m512i nibble_shifts =
      _mm512_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28, 0, 4, 8, 12, 16, 20, 24, 28);
  const __m512i code_word = _mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1);
  for (int v = 0; v < 2; ++v) {
    const __m512i packed = _mm512_permutexvar_epi32(
        code_word,
        _mm512_castsi128_si512(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(codes + 2 * v))));
    const __m512i code =
        _mm512_and_si512(_mm512_srlv_epi32(packed, nibble_shifts), _mm512_set1_epi32(15));
    scale[v] = _mm512_permutexvar_ps(code, scale_table);
  }
}

}  // namespace

bool exl2_batched_integer_supported() {
  return wide_vnni_allowed();
}

__attribute__((target("avx512f,avx512bw,avx512vnni,avx2,fma"))) void exl2_batched_integer_tile(
    const Exl2Weight& weight, std::int64_t columns, const Exl2IntegerInputs& inputs,
    std::int64_t row_begin, std::int64_t row_end, std::int64_t begin,
    std::vector<std::int32_t>& pairs, float* acc) {
  const std::int64_t rows = row_end - row_begin;
  std::fill(acc, acc + rows * kWideTile, 0.0f);
  grow_to(pairs, std::size_t(kChunkRows / 2 * kWideTile));
  const std::size_t groups = weight.groups.size();
  for (std::size_t g = 0; g < groups; ++g) {
    const Exl2Group& group = weight.groups[g];
    unpack_any_group(group, weight.q_weight + group.q_row * columns + begin, columns, pairs.data());
    prefetch_next_group_tile(weight, columns, begin, g);
    GroupTile tile{pairs.data(), group.rows / 2, {}, g, group.first_row / 2};
    column_scales(weight, columns, g, begin, tile.scale);
    std::int64_t r = 0;
    for (; r + kBlockRows <= rows; r += kBlockRows)
      multiply_rows<kBlockRows>(tile, inputs, row_begin + r, groups, acc + r * kWideTile);
    if (r < rows) {
      multiply_rest<kBlockRows - 1>(tile, inputs, row_begin + r, int(rows - r), groups,
                                    acc + r * kWideTile);
    }
  }
}

#else

bool exl2_batched_integer_supported() {
  return false;
}

void exl2_batched_integer_tile(const Exl2Weight&, std::int64_t, const Exl2IntegerInputs&,
                               std::int64_t, std::int64_t, std::int64_t, std::vector<std::int32_t>&,
                               float*) {
  throw std::logic_error("the integer EXL2 tiles need AVX-512 VNNI");
}

#endif

}  // namespace quire::kernels::linear_detail
