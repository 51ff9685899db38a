// Dot products of one FP32 input with FP16 weight rows: the batch-1 decode of
// FP16 models, bound by reading the weights. With AVX2, FMA and F16C each
// step converts 8 halves of four rows and fuses them into eight running sums
// (two per row, so that consecutive FMAs do not wait on each other); the input
// is loaded once for the four rows. This removes the round trip through a
// widened buffer of the portable path.

#include <algorithm>
#include <stdexcept>

#include "count_dispatch.h"
#include "dense_dots_f16_wide.h"
#include "lane_sums.h"
#include "linear_internal.h"
#include "quire/kernels/cpu/simd.h"
#include "row_walk.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define QUIRE_HAVE_FMA_F16C_PATH 1
#endif

namespace quire::kernels::linear_detail {
namespace {

// Input rows from which 512-bit decode products take four weight rows at a
// time (block_dots_wide); fewer take one at a time, which reads one stream
// of weights from memory where four streams read slower.
constexpr std::int64_t kBlockRowsFrom = 2;

#ifdef QUIRE_HAVE_FMA_F16C_PATH
__attribute__((target("avx2,fma,f16c"))) inline __m256 widen8(const std::uint16_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

// out[r] = x . w[r] for four rows of K halves, w rows `stride` apart. The
// four rows at `next` (nullptr for none) are fetched into L2 meanwhile, one
// line per row every 32 halves: decode reads each weight once, in rows of a
// few KiB, and the hardware prefetcher alone kept the loads waiting on
// memory (a decode step's FP16 products of the 96M benchmark shape took
// 8.7 ms without, 4.3 ms with, 20 -> 41 GB/s of the machine's ~50, fetching
// into L1). Into L1 the fetched lines evicted the ones in use: on a Zen 4
// running these 256-bit kernels (QUIRE_CPU_VECTOR_BITS=256) one row of the
// 96M shape's products took 8.3-12.9 ms fetching into L1 against 5.9-6.7
// into L2, as the 512-bit kernels had shown.
__attribute__((target("avx2,fma,f16c"))) void four_dots(const float* x, const std::uint16_t* w,
                                                        const std::uint16_t* next,
                                                        std::int64_t stride, std::int64_t k_count,
                                                        float* out) {
  __m256 a[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(),
                 _mm256_setzero_ps()};
  __m256 b[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(),
                 _mm256_setzero_ps()};
  std::int64_t k = 0;
  for (; k + 16 <= k_count; k += 16) {
    const __m256 x0 = _mm256_loadu_ps(x + k);
    const __m256 x1 = _mm256_loadu_ps(x + k + 8);
    if (next != nullptr && k % 32 == 0) {
      for (int r = 0; r < 4; ++r)
        _mm_prefetch(reinterpret_cast<const char*>(next + r * stride + k), _MM_HINT_T1);
    }
    for (int r = 0; r < 4; ++r) {
      a[r] = _mm256_fmadd_ps(widen8(w + r * stride + k), x0, a[r]);
      b[r] = _mm256_fmadd_ps(widen8(w + r * stride + k + 8), x1, b[r]);
    }
  }
  for (int r = 0; r < 4; ++r) {
    float sum = horizontal_sum(_mm256_add_ps(a[r], b[r]));
    for (std::int64_t j = k; j < k_count; ++j)
      sum += x[j] * _cvtsh_ss(w[r * stride + j]);
    out[r] = sum;
  }
}

// The same sums as one row of four_dots, in the same order, so that an
// output does not depend on how the rows were grouped.
__attribute__((target("avx2,fma,f16c"))) void one_dot(const float* x, const std::uint16_t* w,
                                                      std::int64_t k_count, float* out) {
  __m256 a = _mm256_setzero_ps();
  __m256 b = _mm256_setzero_ps();
  std::int64_t k = 0;
  for (; k + 16 <= k_count; k += 16) {
    a = _mm256_fmadd_ps(widen8(w + k), _mm256_loadu_ps(x + k), a);
    b = _mm256_fmadd_ps(widen8(w + k + 8), _mm256_loadu_ps(x + k + 8), b);
  }
  float sum = horizontal_sum(_mm256_add_ps(a, b));
  for (; k < k_count; ++k)
    sum += x[k] * _cvtsh_ss(w[k]);
  *out = sum;
}

// out[r] = x[r] . w for up to four input rows (`x_stride` apart) and one
// weight row: each sum formed exactly as one_dot forms it (even and odd
// blocks of 8 apart, added at the end), so a job's outputs are the same bits
// whether its decode step ran alone or beside others. Each weight block is
// widened once for all the inputs. The row at `next` (nullptr for none) is
// fetched into L2 meanwhile, as four_dots does. One weight row against four
// inputs ran at 12.5 G multiply-adds/s on one thread of the benchmark
// machine where two rows against two inputs ran at 9.5 (fewer conversions
// per multiply-add); the loops over inputs are unrolled by hand, since a
// compiler at -O2 kept the accumulators in memory otherwise.
template <int Inputs>
__attribute__((target("avx2,fma,f16c"))) void row_dots(const float* x, std::int64_t x_stride,
                                                       const std::uint16_t* w,
                                                       const std::uint16_t* next,
                                                       std::int64_t k_count, float* out) {
  static_assert(Inputs >= 1 && Inputs <= 4);
  const float* x0 = x;
  const float* x1 = x + (Inputs > 1 ? x_stride : 0);
  const float* x2 = x + (Inputs > 2 ? 2 * x_stride : 0);
  const float* x3 = x + (Inputs > 3 ? 3 * x_stride : 0);
  __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  __m256 b0 = a0, b1 = a0, b2 = a0, b3 = a0;
  std::int64_t k = 0;
  for (; k + 16 <= k_count; k += 16) {
    if (next != nullptr && k % 32 == 0)
      _mm_prefetch(reinterpret_cast<const char*>(next + k), _MM_HINT_T1);
    const __m256 lo = widen8(w + k), hi = widen8(w + k + 8);
    a0 = _mm256_fmadd_ps(lo, _mm256_loadu_ps(x0 + k), a0);
    b0 = _mm256_fmadd_ps(hi, _mm256_loadu_ps(x0 + k + 8), b0);
    if constexpr (Inputs > 1) {
      a1 = _mm256_fmadd_ps(lo, _mm256_loadu_ps(x1 + k), a1);
      b1 = _mm256_fmadd_ps(hi, _mm256_loadu_ps(x1 + k + 8), b1);
    }
    if constexpr (Inputs > 2) {
      a2 = _mm256_fmadd_ps(lo, _mm256_loadu_ps(x2 + k), a2);
      b2 = _mm256_fmadd_ps(hi, _mm256_loadu_ps(x2 + k + 8), b2);
    }
    if constexpr (Inputs > 3) {
      a3 = _mm256_fmadd_ps(lo, _mm256_loadu_ps(x3 + k), a3);
      b3 = _mm256_fmadd_ps(hi, _mm256_loadu_ps(x3 + k + 8), b3);
    }
  }
  const float* inputs[4] = {x0, x1, x2, x3};
  const __m256 sums[4] = {_mm256_add_ps(a0, b0), _mm256_add_ps(a1, b1), _mm256_add_ps(a2, b2),
                          _mm256_add_ps(a3, b3)};
  for (int r = 0; r < Inputs; ++r) {
    float sum = horizontal_sum(sums[r]);
    for (std::int64_t j = k; j < k_count; ++j)
      sum += inputs[r][j] * _cvtsh_ss(w[j]);
    out[r] = sum;
  }
}

// Eight rows of eight floats transposed in registers: r[i] holds row i
// before, column i after.
__attribute__((target("avx2,fma,f16c"))) inline void transpose8(__m256* r) {
  const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
  const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
  const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
  const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
  const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xee);
  const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xee);
  const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xee);
  const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xee);
  r[0] = _mm256_permute2f128_ps(u0, u4, 0x20);
  r[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
  r[2] = _mm256_permute2f128_ps(u2, u6, 0x20);
  r[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
  r[4] = _mm256_permute2f128_ps(u0, u4, 0x31);
  r[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
  r[6] = _mm256_permute2f128_ps(u2, u6, 0x31);
  r[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}

__attribute__((target("avx2,fma,f16c"))) void widen_tile_transposed(const std::uint16_t* w,
                                                                    std::int64_t k_count,
                                                                    int outputs, int depth,
                                                                    int width, float* tile) {
  for (int i0 = 0; i0 < outputs; i0 += 8) {
    for (int j0 = 0; j0 < depth; j0 += 8) {
      __m256 block[8];
      for (int i = 0; i < 8; ++i)
        block[i] = widen8(w + (i0 + i) * k_count + j0);
      transpose8(block);
      for (int j = 0; j < 8; ++j)
        _mm256_storeu_ps(tile + (j0 + j) * width + i0, block[j]);
    }
  }
}

bool processor_has_path() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && processor_has_f16c();
}
#endif

}  // namespace

bool f16_dots(const float* x, const std::uint16_t* w, std::int64_t k_count, std::int64_t begin,
              std::int64_t end, float* out) {
#ifdef QUIRE_HAVE_FMA_F16C_PATH
  static const bool available = processor_has_path();
  static const bool wide = available && wide_vectors_allowed();
  if (!available) return false;
  // With 512-bit registers one row at a time: see one_dot_wide.
  if (wide) {
    for (std::int64_t n = begin; n < end; ++n) {
      const std::uint16_t* next = n + 1 < end ? w + (n + 1) * k_count : nullptr;
      one_dot_wide(x, w + n * k_count, next, k_count, out + (n - begin));
    }
    return true;
  }
  std::int64_t n = begin;
  for (; n + 4 <= end; n += 4) {
    const std::uint16_t* next = n + 8 <= end ? w + (n + 4) * k_count : nullptr;
    four_dots(x, w + n * k_count, next, k_count, k_count, out + (n - begin));
  }
  for (; n < end; ++n)
    one_dot(x, w + n * k_count, k_count, out + (n - begin));
  return true;
#else
  (void)x, (void)w, (void)k_count, (void)begin, (void)end, (void)out;
  return false;
#endif
}

void f16_widen_tile(const std::uint16_t* w, std::int64_t k_count, int outputs, int depth, int width,
                    float* tile) {
#ifdef QUIRE_HAVE_FMA_F16C_PATH
  if (f16_dots_available() && outputs % 8 == 0 && depth % 8 == 0) {
    widen_tile_transposed(w, k_count, outputs, depth, width, tile);
    return;
  }
#endif
  float halves[32];
  for (int i = 0; i < outputs; ++i) {
    widen_halves(w + i * k_count, depth, halves);
    for (int j = 0; j < depth; ++j)
      tile[j * width + i] = halves[j];
  }
}

bool f16_dots_available() {
#ifdef QUIRE_HAVE_FMA_F16C_PATH
  static const bool available = processor_has_path();
  return available;
#else
  return false;
#endif
}

void f16_row_dots(const float* x, std::int64_t rows, const std::uint16_t* w, std::int64_t k_count,
                  std::int64_t begin, std::int64_t end, float* out) {
#ifdef QUIRE_HAVE_FMA_F16C_PATH
  if (!f16_dots_available()) throw std::logic_error("f16_row_dots: no AVX2, FMA and F16C");
  static const bool wide = wide_vectors_allowed();
  // With AVX-512 and several inputs, four weight rows at a time: each input
  // vector then serves four weight rows, where one weight row at a time
  // reloaded every input row (from L2 once they outgrow L1) for each weight
  // row. Single rows fetch the next one.
  walk_rows<kBlockOutputs>(
      RowWalk<std::uint16_t>{x, rows, w, k_count, begin, end, out}, wide && rows >= kBlockRowsFrom,
      1,
      [&](std::int64_t inputs, const float* xr, const std::uint16_t* block,
          const std::uint16_t* fetch, float* sums) {
        block_dots_wide(static_cast<int>(inputs), xr, k_count, block, fetch, k_count, sums);
      },
      [&](std::int64_t inputs, const float* xr, const std::uint16_t* row,
          const std::uint16_t* fetch, float* sums) {
        if (wide) {
          row_dots_wide(static_cast<int>(inputs), xr, k_count, row, fetch, k_count, sums);
        } else {
          with_count<4>(inputs,
                        [&](auto i) { row_dots<i>(xr, k_count, row, fetch, k_count, sums); });
        }
      });
#else
  (void)x, (void)rows, (void)w, (void)k_count, (void)begin, (void)end, (void)out;
  throw std::logic_error("f16_row_dots: no AVX2, FMA and F16C");
#endif
}

}  // namespace quire::kernels::linear_detail
