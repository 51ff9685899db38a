// The 512-bit products of CPU attention. Each function is compiled for
// AVX-512 whatever the build's baseline and is called only where
// wide_vectors_allowed() holds; helpers are forced inline so that they are
// compiled for the same target.

#include "attention_wide.h"

#if defined(__x86_64__) && defined(__GNUC__)
// GCC 12's AVX-512 intrinsics pass a self-initialized "undefined" vector
// where a mask would merge, which -W(maybe-)uninitialized reports inside the
// header once inlined (GCC bug 105593, fixed in 13).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#define QUIRE_WIDE_TARGET __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx2,fma")))
#define QUIRE_WIDE_INLINE QUIRE_WIDE_TARGET __attribute__((always_inline)) inline
#endif

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "attention_math.h"

namespace quire::kernels::cpu_attention {

#ifdef QUIRE_WIDE_TARGET
namespace {

constexpr int kLanes = 8;    // rows of a lane group (attention_kernel.h)
constexpr int kKeyTile = 8;  // keys scored together

// Four rows' sums over Vectors * 16 columns starting at `column`.
template <int Vectors>
QUIRE_WIDE_INLINE void accumulate_columns(const float* __restrict weights,
                                          const float* __restrict values, int dim, int begin,
                                          int end, const float* __restrict correction,
                                          float* __restrict sums, int column) {
  constexpr int kRows = 4;
  __m512 sum[kRows][Vectors];
#pragma GCC unroll 4
  for (int r = 0; r < kRows; ++r) {
    const __m512 scale = _mm512_set1_ps(correction[r]);
#pragma GCC unroll 4
    for (int v = 0; v < Vectors; ++v)
      sum[r][v] = _mm512_mul_ps(_mm512_loadu_ps(sums + r * dim + column + 16 * v), scale);
  }
  for (int j = begin; j <= end; ++j) {
    __m512 value[Vectors];
#pragma GCC unroll 4
    for (int v = 0; v < Vectors; ++v)
      value[v] = _mm512_loadu_ps(values + j * dim + column + 16 * v);
    const float* __restrict weight = weights + j * kLanes;
#pragma GCC unroll 4
    for (int r = 0; r < kRows; ++r) {
      const __m512 w = _mm512_set1_ps(weight[r]);
#pragma GCC unroll 4
      for (int v = 0; v < Vectors; ++v)
        sum[r][v] = _mm512_fmadd_ps(w, value[v], sum[r][v]);
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < kRows; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v < Vectors; ++v)
      _mm512_storeu_ps(sums + r * dim + column + 16 * v, sum[r][v]);
  }
}

// exp_nonpositive (attention_math.h) on sixteen values.
QUIRE_WIDE_INLINE __m512 exp_nonpositive_wide(__m512 x) {
  using namespace exp_constants;
  x = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(kLowest)), _mm512_setzero_ps());
  const __m512 round = _mm512_set1_ps(kRound);
  const __m512 n = _mm512_sub_ps(_mm512_fmadd_ps(x, _mm512_set1_ps(kLog2e), round), round);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2High), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Low), r);
  __m512 p = _mm512_set1_ps(kPolynomial[0]);
#pragma GCC unroll 5
  for (int i = 1; i < 6; ++i)
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kPolynomial[i]));
  p = _mm512_add_ps(_mm512_fmadd_ps(p, _mm512_mul_ps(r, r), r), _mm512_set1_ps(1.0f));
  const __m512i shift = _mm512_slli_epi32(_mm512_cvtps_epi32(n), 23);
  return _mm512_castsi512_ps(_mm512_add_epi32(_mm512_castps_si512(p), shift));
}

// Which of the sixteen values at key `key` (lanes 0-7) and key + 1 (lanes
// 8-15) fall in their rows' ranges; `pair` drops the second key.
QUIRE_WIDE_INLINE __mmask16 valid_pair(std::int32_t key, __m512i first, __m512i last, bool pair) {
  const __m512i keys = _mm512_add_epi32(
      _mm512_set1_epi32(key), _mm512_set_epi32(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0));
  const __mmask16 valid =
      _mm512_cmple_epi32_mask(first, keys) & _mm512_cmple_epi32_mask(keys, last);
  return pair ? valid : static_cast<__mmask16>(valid & 0x00ff);
}

}  // namespace

QUIRE_WIDE_TARGET void softmax_block_wide(float* __restrict scores, int begin, int end,
                                          std::int32_t position,
                                          const std::int32_t* __restrict first,
                                          const std::int32_t* __restrict last,
                                          float* __restrict maximum, float* __restrict total,
                                          float* __restrict correction) {
  const float minus_infinity = -std::numeric_limits<float>::infinity();
  const __m512i row_first =
      _mm512_broadcast_i32x8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(first)));
  const __m512i row_last =
      _mm512_broadcast_i32x8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(last)));
  // An odd last key is read and written through a half mask: its pair would
  // lie past the block (or past the buffer).
  __m512 block_max = _mm512_set1_ps(minus_infinity);
  for (int j = begin; j <= end; j += 2) {
    const bool pair = j < end;
    const __mmask16 valid = valid_pair(position + j, row_first, row_last, pair);
    const __m512 score = _mm512_maskz_loadu_ps(pair ? 0xffff : 0x00ff, scores + j * kLanes);
    block_max = _mm512_mask_max_ps(block_max, valid, block_max, score);
  }
  alignas(32) float lane_max[kLanes];
  _mm256_store_ps(lane_max, _mm256_max_ps(_mm512_castps512_ps256(block_max),
                                          _mm512_extractf32x8_ps(block_max, 1)));
  alignas(32) float base[kLanes];
  for (int lane = 0; lane < kLanes; ++lane) {
    const float grown = std::max(maximum[lane], lane_max[lane]);
    correction[lane] = grown == maximum[lane] ? 1.0f : std::exp(maximum[lane] - grown);
    maximum[lane] = grown;
    // A row without keys so far keeps weight 0 everywhere; any finite base does.
    base[lane] = grown == minus_infinity ? 0.0f : grown;
  }
  const __m512 row_base = _mm512_broadcast_f32x8(_mm256_load_ps(base));
  __m512 sum = _mm512_setzero_ps();
  for (int j = begin; j <= end; j += 2) {
    const bool pair = j < end;
    const __mmask16 valid = valid_pair(position + j, row_first, row_last, pair);
    const __mmask16 present = pair ? 0xffff : 0x00ff;
    const __m512 score = _mm512_maskz_loadu_ps(present, scores + j * kLanes);
    const __m512 weight =
        _mm512_maskz_mov_ps(valid, exp_nonpositive_wide(_mm512_sub_ps(score, row_base)));
    _mm512_mask_storeu_ps(scores + j * kLanes, present, weight);
    sum = _mm512_add_ps(sum, weight);
  }
  alignas(32) float lane_sum[kLanes];
  _mm256_store_ps(lane_sum,
                  _mm256_add_ps(_mm512_castps512_ps256(sum), _mm512_extractf32x8_ps(sum, 1)));
  for (int lane = 0; lane < kLanes; ++lane)
    total[lane] = total[lane] * correction[lane] + lane_sum[lane];
}

QUIRE_WIDE_TARGET void score_two_groups_wide(const float* __restrict queries_a,
                                             const float* __restrict queries_b,
                                             const float* __restrict keys, int dim, int begin,
                                             int end, float* __restrict scores_a,
                                             float* __restrict scores_b) {
  for (int j = begin; j < end; j += kKeyTile) {
    const float* __restrict k = keys + j * dim;
    // Eight independent sums: each multiply-add's chain has room to wait.
    __m512 sum[kKeyTile];
#pragma GCC unroll 8
    for (int t = 0; t < kKeyTile; ++t)
      sum[t] = _mm512_setzero_ps();
    for (int i = 0; i < dim; ++i) {
      const __m512 q =
          _mm512_insertf32x8(_mm512_castps256_ps512(_mm256_loadu_ps(queries_a + i * kLanes)),
                             _mm256_loadu_ps(queries_b + i * kLanes), 1);
#pragma GCC unroll 8
      for (int t = 0; t < kKeyTile; ++t)
        sum[t] = _mm512_fmadd_ps(_mm512_set1_ps(k[t * dim + i]), q, sum[t]);
    }
#pragma GCC unroll 8
    for (int t = 0; t < kKeyTile; ++t) {
      _mm256_storeu_ps(scores_a + (j + t) * kLanes, _mm512_castps512_ps256(sum[t]));
      _mm256_storeu_ps(scores_b + (j + t) * kLanes, _mm512_extractf32x8_ps(sum[t], 1));
    }
  }
}

QUIRE_WIDE_TARGET void accumulate_four_rows_wide(const float* __restrict weights,
                                                 const float* __restrict values, int dim, int begin,
                                                 int end, const float* __restrict correction,
                                                 float* __restrict sums, int columns) {
  // 64 columns hold sixteen sums in registers, four value loads and four
  // weight broadcasts feeding sixteen multiply-adds per key.
  int column = 0;
  for (; column + 64 <= columns; column += 64)
    accumulate_columns<4>(weights, values, dim, begin, end, correction, sums, column);
  for (; column + 32 <= columns; column += 32)
    accumulate_columns<2>(weights, values, dim, begin, end, correction, sums, column);
}

#else

void score_two_groups_wide(const float*, const float*, const float*, int, int, int, float*,
                           float*) {
  throw std::logic_error("the 512-bit attention kernels need an x86-64 build with GCC or Clang");
}

void accumulate_four_rows_wide(const float*, const float*, int, int, int, const float*, float*,
                               int) {
  throw std::logic_error("the 512-bit attention kernels need an x86-64 build with GCC or Clang");
}

void softmax_block_wide(float*, int, int, std::int32_t, const std::int32_t*, const std::int32_t*,
                        float*, float*, float*) {
  throw std::logic_error("the 512-bit attention kernels need an x86-64 build with GCC or Clang");
}

#endif

}  // namespace quire::kernels::cpu_attention
