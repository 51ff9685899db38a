// The inner loop of every batched product: a tile of decoded weights applied
// to a block of input rows. Prefill spends nearly all its time here.
//
// A loop over one input row keeps only T / 8 sums in registers, and every
// multiply-add waits on the load of its weights: on AVX2 machines that ran at
// about a third of the processor's multiply-add rate. With AVX2 and FMA the
// tile is applied instead by a register-blocked kernel that holds the sums of
// several rows at once (6 rows x 16 columns, or 12 x 8 for narrow tiles: 12
// accumulators, as many as two FMA units with a four-cycle latency need), so
// each weight vector loaded serves 6 or 12 rows and each broadcast input 2
// vectors. Every sum is still formed in the order j = 0, 1, ... with one fused
// multiply-add per term, as the x86-64-v3 clone of the portable loop forms it
// wherever the compiler fuses its multiply-adds (at -O2 and above), so the
// results are then the same bits on either path.

#include "linear_internal.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define QUIRE_HAVE_AVX2_TILE 1
#endif

namespace quire::kernels::linear_detail {
namespace {

#ifdef QUIRE_HAVE_AVX2_TILE
#define QUIRE_AVX2_FMA __attribute__((target("avx2,fma"), always_inline)) inline

// The loops over rows and vectors are unrolled completely, so that the sums
// live in registers (GCC at -O2 left them in memory otherwise).
// acc[r][c0 + v * 8 ...] for Rows rows (Rows <= MaxRows) and Vectors vectors
// of 8 columns starting at column c0 of a tile T wide.
template <int T, int Vectors, int Rows>
QUIRE_AVX2_FMA void block(const float* x, std::int64_t x_stride, const float* tile, int c0,
                          int count, float* acc) {
  __m256 sum[Rows][Vectors];
#pragma GCC unroll 12
  for (int r = 0; r < Rows; ++r) {
#pragma GCC unroll 2
    for (int v = 0; v < Vectors; ++v)
      sum[r][v] = _mm256_loadu_ps(acc + r * T + c0 + v * 8);
  }
  for (int j = 0; j < count; ++j) {
    __m256 weights[Vectors];
#pragma GCC unroll 2
    for (int v = 0; v < Vectors; ++v)
      weights[v] = _mm256_loadu_ps(tile + j * T + c0 + v * 8);
#pragma GCC unroll 12
    for (int r = 0; r < Rows; ++r) {
      const __m256 input = _mm256_broadcast_ss(x + r * x_stride + j);
#pragma GCC unroll 2
      for (int v = 0; v < Vectors; ++v)
        sum[r][v] = _mm256_fmadd_ps(input, weights[v], sum[r][v]);
    }
  }
#pragma GCC unroll 12
  for (int r = 0; r < Rows; ++r) {
#pragma GCC unroll 2
    for (int v = 0; v < Vectors; ++v)
      _mm256_storeu_ps(acc + r * T + c0 + v * 8, sum[r][v]);
  }
}

// The rows left after the full blocks, fewer than MaxRows of them.
template <int T, int Vectors, int MaxRows>
QUIRE_AVX2_FMA void remainder(const float* x, std::int64_t x_stride, const float* tile, int c0,
                              int count, float* acc, int rows) {
  if constexpr (MaxRows > 1) {
    if (rows == MaxRows - 1) {
      block<T, Vectors, MaxRows - 1>(x, x_stride, tile, c0, count, acc);
    } else {
      remainder<T, Vectors, MaxRows - 1>(x, x_stride, tile, c0, count, acc, rows);
    }
  }
}

template <int T>
__attribute__((target("avx2,fma"))) void apply_tile_avx2(const float* x, std::int64_t x_stride,
                                                         std::int64_t rows, const float* tile,
                                                         int count, float* acc) {
  // Wide tiles: two vectors of columns by 6 rows; narrow tiles: one by 12.
  constexpr int kVectors = T >= 16 ? 2 : 1;
  constexpr int kRows = T >= 16 ? 6 : 12;
  for (int c0 = 0; c0 < T; c0 += kVectors * 8) {
    std::int64_t r = 0;
    for (; r + kRows <= rows; r += kRows)
      block<T, kVectors, kRows>(x + r * x_stride, x_stride, tile, c0, count, acc + r * T);
    if (r < rows) {
      remainder<T, kVectors, kRows>(x + r * x_stride, x_stride, tile, c0, count, acc + r * T,
                                    static_cast<int>(rows - r));
    }
  }
}

// The same with 512-bit registers for wide tiles: 12 rows x 32 columns, 24
// sums, each broadcast input serving two vectors of 16. On Zen 4 a 512-bit
// FMA costs two 256-bit ones, so the arithmetic is no faster; what halves is
// the loads, broadcasts and loop work around it, which held the AVX2 kernel
// to about two thirds of the multiply-add peak.
#define QUIRE_AVX512_FMA \
  __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx2,fma"), always_inline)) inline

template <int Rows>
QUIRE_AVX512_FMA void wide_block(const float* x, std::int64_t x_stride, const float* tile,
                                 int count, float* acc) {
  __m512 sum[Rows][2];
#pragma GCC unroll 12
  for (int r = 0; r < Rows; ++r) {
    sum[r][0] = _mm512_loadu_ps(acc + r * kWideTile);
    sum[r][1] = _mm512_loadu_ps(acc + r * kWideTile + 16);
  }
  for (int j = 0; j < count; ++j) {
    const __m512 low = _mm512_loadu_ps(tile + j * kWideTile);
    const __m512 high = _mm512_loadu_ps(tile + j * kWideTile + 16);
#pragma GCC unroll 12
    for (int r = 0; r < Rows; ++r) {
      const __m512 input = _mm512_set1_ps(x[r * x_stride + j]);
      sum[r][0] = _mm512_fmadd_ps(input, low, sum[r][0]);
      sum[r][1] = _mm512_fmadd_ps(input, high, sum[r][1]);
    }
  }
#pragma GCC unroll 12
  for (int r = 0; r < Rows; ++r) {
    _mm512_storeu_ps(acc + r * kWideTile, sum[r][0]);
    _mm512_storeu_ps(acc + r * kWideTile + 16, sum[r][1]);
  }
}

template <int MaxRows>
QUIRE_AVX512_FMA void wide_remainder(const float* x, std::int64_t x_stride, const float* tile,
                                     int count, float* acc, int rows) {
  if constexpr (MaxRows > 0) {
    if (rows == MaxRows) {
      wide_block<MaxRows>(x, x_stride, tile, count, acc);
    } else {
      wide_remainder<MaxRows - 1>(x, x_stride, tile, count, acc, rows);
    }
  }
}

constexpr int kWideBlockRows = 12;

__attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx2,fma"))) void apply_wide_tile_avx512(
    const float* x, std::int64_t x_stride, std::int64_t rows, const float* tile, int count,
    float* acc) {
  std::int64_t r = 0;
  for (; r + kWideBlockRows <= rows; r += kWideBlockRows)
    wide_block<kWideBlockRows>(x + r * x_stride, x_stride, tile, count, acc + r * kWideTile);
  if (r < rows) {
    wide_remainder<kWideBlockRows - 1>(x + r * x_stride, x_stride, tile, count, acc + r * kWideTile,
                                       static_cast<int>(rows - r));
  }
}

bool processor_has_avx2_fma() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
#endif

}  // namespace

// Eight floats as one GCC vector: two SSE registers in the baseline clone,
// one AVX register in the x86-64-v3 clone. Written with these rather than as
// a loop over T scalars because GCC at -O3 vectorized that loop across its
// unrolled iterations with shuffles and kept the sums on the stack: a
// prefill 30 times slower than at -O2.
using Floats8 = float __attribute__((vector_size(32)));

template <int T>
QUIRE_LINEAR_CLONES void apply_tile_portable(const float* __restrict x, std::int64_t x_stride,
                                             std::int64_t rows, const float* __restrict tile,
                                             int count, float* __restrict acc) {
  constexpr int kVectors = T / 8;
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * x_stride;
    // Copies, not casts: the rows need not be aligned to 32 bytes.
    Floats8 sum[kVectors];
    __builtin_memcpy(sum, acc + r * T, sizeof sum);
    for (int j = 0; j < count; ++j) {
      const float xj = xr[j];
      Floats8 weights[kVectors];
      __builtin_memcpy(weights, tile + j * T, sizeof weights);
#pragma GCC unroll 4
      for (int v = 0; v < kVectors; ++v)
        sum[v] += xj * weights[v];
    }
    __builtin_memcpy(acc + r * T, sum, sizeof sum);
  }
}

bool apply_tile_blocked() {
#ifdef QUIRE_HAVE_AVX2_TILE
  static const bool avx2 = processor_has_avx2_fma();
  return avx2;
#else
  return false;
#endif
}

bool apply_tile_wide() {
#ifdef QUIRE_HAVE_AVX2_TILE
  static const bool wide = apply_tile_blocked() && wide_vectors_allowed();
  return wide;
#else
  return false;
#endif
}

template <int T>
void apply_tile(const float* __restrict x, std::int64_t x_stride, std::int64_t rows,
                const float* __restrict tile, int count, float* __restrict acc) {
#ifdef QUIRE_HAVE_AVX2_TILE
  if (T == kWideTile && apply_tile_wide()) {
    apply_wide_tile_avx512(x, x_stride, rows, tile, count, acc);
    return;
  }
  if (apply_tile_blocked()) {
    apply_tile_avx2<T>(x, x_stride, rows, tile, count, acc);
    return;
  }
#endif
  apply_tile_portable<T>(x, x_stride, rows, tile, count, acc);
}

template void apply_tile<kWideTile>(const float*, std::int64_t, std::int64_t, const float*, int,
                                    float*);
template void apply_tile<kNarrowTile>(const float*, std::int64_t, std::int64_t, const float*, int,
                                      float*);
template void apply_tile_portable<kWideTile>(const float*, std::int64_t, std::int64_t, const float*,
                                             int, float*);
template void apply_tile_portable<kNarrowTile>(const float*, std::int64_t, std::int64_t,
                                               const float*, int, float*);

}  // namespace quire::kernels::linear_detail
