#pragma once

// What the 256-bit dot-product kernels of dense FP16 and FP8 weights share:
// the sum of a register's eight lanes, in one fixed order.

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

namespace quire::kernels::linear_detail {

__attribute__((target("avx2,fma,f16c"))) inline float horizontal_sum(__m256 v) {
  const __m128 pair = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 two = _mm_add_ps(pair, _mm_movehl_ps(pair, pair));
  return _mm_cvtss_f32(_mm_add_ss(two, _mm_movehdup_ps(two)));
}

}  // namespace quire::kernels::linear_detail

#endif
