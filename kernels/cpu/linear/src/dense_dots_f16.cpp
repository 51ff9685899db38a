// Dot products of one FP32 input with FP16 weight rows: the batch-1 decode of
// FP16 models, bound by reading the weights. With AVX2, FMA and F16C each
// step converts 8 halves of four rows and fuses them into eight running sums
// (two per row, so that consecutive FMAs do not wait on each other); the input
// is loaded once for the four rows. This removes the round trip through a
// widened buffer of the portable path.

#include "linear_internal.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define QUIRE_HAVE_FMA_F16C_PATH 1
#endif

namespace quire::kernels::linear_detail {
namespace {

#ifdef QUIRE_HAVE_FMA_F16C_PATH
__attribute__((target("avx2,fma,f16c"))) inline __m256 widen8(const std::uint16_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

__attribute__((target("avx2,fma,f16c"))) inline float horizontal_sum(__m256 v) {
  const __m128 pair = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 two = _mm_add_ps(pair, _mm_movehl_ps(pair, pair));
  return _mm_cvtss_f32(_mm_add_ss(two, _mm_movehdup_ps(two)));
}

// out[r] = x . w[r] for four rows of K halves, w rows `stride` apart. The
// four rows at `next` (nullptr for none) are fetched into L1 meanwhile, one
// line per row every 32 halves: decode reads each weight once, in rows of a
// few KiB, and the hardware prefetcher alone kept the loads waiting on
// memory (a decode step's FP16 products of the 96M benchmark shape took
// 8.7 ms without, 4.3 ms with, 20 -> 41 GB/s of the machine's ~50).
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
        _mm_prefetch(reinterpret_cast<const char*>(next + r * stride + k), _MM_HINT_T0);
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

bool processor_has_path() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
         __builtin_cpu_supports("f16c");
}
#endif

}  // namespace

bool f16_dots(const float* x, const std::uint16_t* w, std::int64_t k_count, std::int64_t begin,
              std::int64_t end, float* out) {
#ifdef QUIRE_HAVE_FMA_F16C_PATH
  static const bool available = processor_has_path();
  if (!available) return false;
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

}  // namespace quire::kernels::linear_detail
