// The integer tiles of batched EXL2 products (linear_exl2_batched.cpp) with
// AVX2 alone, for processors without AVX-512 VNNI.
//
// Without VNNI the EXL2 prefill widened every weight to float and ran at the
// FP16 tiles' rate. Here the tiles keep the VNNI tiles' integers: the inputs
// rounded to 16 bits per group and row, the weights unpacked once per tile
// into signed 16-bit pairs. vpmaddwd multiplies two pairs of them and adds
// both products into a 32-bit lane (sixteen products per 256-bit
// instruction, against eight per FMA), and vpaddd adds that to the sum on
// another port. Zen 2 to 4 and Skylake run two vpmaddwd per cycle, Haswell
// one.
//
// The sums are the same integers as vpdpwssd's and are scaled with the same
// float operations, so these tiles give the VNNI tiles' bits.
//
// Sixteen registers: a pass holds six rows by sixteen columns of sums
// (twelve registers), the two weight vectors of a pair, the broadcast input
// and a product; the 32-column tile takes two passes.
//
// The functions mirror linear_exl2_batched.cpp's one by one at half the
// width. They are written twice rather than shared: GCC carries a function's
// target (AVX2 here, AVX-512 there) neither into lambdas nor into the
// templates it would call, and the intrinsics need it.

#include <algorithm>
#include <stdexcept>

#include "exl2_integer_layout.h"
#include "linear_internal.h"
#include "quire/kernels/cpu/exl2_scale.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#include "narrow_packed_values.h"
#define QUIRE_HAVE_EXL2_TILES_256 1
#endif

namespace quire::kernels::linear_detail {

#ifdef QUIRE_HAVE_EXL2_TILES_256

#define QUIRE_TILE_AVX2 __attribute__((target("avx2,fma"), always_inline)) inline

namespace {

using narrow_values::pair_lane;

// Pair P of a block for eight columns as two signed weights q - zero.
template <int Bits, int P>
QUIRE_TILE_AVX2 void store_pairs(const __m256i* w, std::int32_t* pairs) {
  if constexpr (P < 16) {
    const __m256i pair =
        _mm256_sub_epi16(pair_lane<Bits, P>(w), _mm256_set1_epi16(std::int16_t(1 << (Bits - 1))));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(pairs + P * kWideTile), pair);
    store_pairs<Bits, P + 1>(w, pairs);
  }
}

// pairs[p * 32 + c] = pair p of the group's rows for the tile's column c.
template <int Bits>
QUIRE_TILE_AVX2 void unpack_group(const std::uint32_t* words, std::int64_t stride, int rows,
                                  std::int32_t* pairs) {
  for (int k = 0; k < rows; k += 32) {
    const std::uint32_t* block = words + std::int64_t(k / 32) * Bits * stride;
    for (int v = 0; v < kWideTile / 8; ++v) {
      __m256i w[Bits];
#pragma GCC unroll 8
      for (int b = 0; b < Bits; ++b)
        w[b] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + b * stride + v * 8));
      store_pairs<Bits, 0>(w, pairs + (k / 2) * kWideTile + v * 8);
    }
  }
}

QUIRE_TILE_AVX2 void unpack_any_group(const Exl2Group& group, const std::uint32_t* words,
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

// What a group's rows share for one tile.
struct GroupTile {
  const std::int32_t* pairs;  // [pair][32]
  int pair_count;
  std::size_t group;
  std::int64_t first_pair;  // in each row's inputs
  alignas(32) float scale[kWideTile];
};

// The scales of the tile's 32 columns for group g: column c's 4-bit code is
// nibble c % 8 of word c / 8, as the VNNI tiles read it.
void column_scales(const Exl2Weight& weight, std::int64_t stride, std::size_t g, std::int64_t begin,
                   float* scale) {
  float table[16];
  exl2_scale_table(weight.q_scale_max[g], table);
  const std::uint32_t* codes = weight.q_scale + std::int64_t(g) * (stride / 8) + begin / 8;
  for (int c = 0; c < kWideTile; ++c)
    scale[c] = table[(codes[c / 8] >> (4 * (c % 8))) & 15u];
}

// sum + the pair products of a and b: vpmaddwd, then vpaddd into the sum's
// register. GCC 12 gave each intrinsic addition a new register and copied
// it back to the sum's, a vmovdqa per product. By value, as
// pair_products.h's: an asm operand naming an array element kept the array
// in memory.
QUIRE_TILE_AVX2 __m256i add_pair_products(__m256i sum, __m256i a, __m256i b) {
  const __m256i products = _mm256_madd_epi16(a, b);
  asm("vpaddd %1, %0, %0" : "+x"(sum) : "x"(products));
  return sum;
}

// acc[r][0, 32) += the group's products for R input rows, sixteen columns
// per pass: the 32-bit sums in registers over every pair, then scaled once.
template <int R>
QUIRE_TILE_AVX2 void multiply_rows(const GroupTile& tile, const Exl2IntegerInputs& inputs,
                                   std::int64_t first_row, std::size_t groups, float* acc) {
  const std::int32_t* x = inputs.pairs.data() + first_row * inputs.half_features + tile.first_pair;
  const std::int64_t stride = inputs.half_features;
  for (int half = 0; half < kWideTile; half += 16) {
    __m256i sum[R][2];
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) {
      sum[r][0] = _mm256_setzero_si256();
      sum[r][1] = _mm256_setzero_si256();
    }
    const std::int32_t* weights = tile.pairs + half;
    for (int p = 0; p < tile.pair_count; ++p) {
      const auto* pair = reinterpret_cast<const __m256i*>(weights + p * kWideTile);
      const __m256i low = _mm256_loadu_si256(pair);
      const __m256i high = _mm256_loadu_si256(pair + 1);
#pragma GCC unroll 6
      for (int r = 0; r < R; ++r) {
        const __m256i input = _mm256_set1_epi32(x[r * stride + p]);
        sum[r][0] = add_pair_products(sum[r][0], low, input);
        sum[r][1] = add_pair_products(sum[r][1], high, input);
      }
    }
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) {
      const __m256 input_scale =
          _mm256_set1_ps(inputs.scales[std::size_t(first_row + r) * groups + tile.group]);
      float* out = acc + r * kWideTile + half;
#pragma GCC unroll 2
      for (int v = 0; v < 2; ++v) {
        const __m256 value = _mm256_mul_ps(input_scale, _mm256_cvtepi32_ps(sum[r][v]));
        _mm256_storeu_ps(out + v * 8, _mm256_fmadd_ps(_mm256_load_ps(tile.scale + half + v * 8),
                                                      value, _mm256_loadu_ps(out + v * 8)));
      }
    }
  }
}

constexpr int kBlockRows = 6;

template <int R>
QUIRE_TILE_AVX2 void multiply_rest(const GroupTile& tile, const Exl2IntegerInputs& inputs,
                                   std::int64_t first_row, int rows, std::size_t groups,
                                   float* acc) {
  if constexpr (R > 0) {
    if (rows == R) {
      multiply_rows<R>(tile, inputs, first_row, groups, acc);
    } else {
      multiply_rest<R - 1>(tile, inputs, first_row, rows, groups, acc);
    }
  }
}

}  // namespace

bool exl2_batched_integer_256_supported() {
  return exl2_integer_supported();
}

__attribute__((target("avx2,fma"))) void exl2_batched_integer_tile_256(
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
    GroupTile tile{pairs.data(), group.rows / 2, g, group.first_row / 2, {}};
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

bool exl2_batched_integer_256_supported() {
  return false;
}

void exl2_batched_integer_tile_256(const Exl2Weight&, std::int64_t, const Exl2IntegerInputs&,
                                   std::int64_t, std::int64_t, std::int64_t,
                                   std::vector<std::int32_t>&, float*) {
  throw std::logic_error("the 256-bit integer EXL2 tiles need an x86-64 build with GCC or Clang");
}

#endif

}  // namespace quire::kernels::linear_detail
