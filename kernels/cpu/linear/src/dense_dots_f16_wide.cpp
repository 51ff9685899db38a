// The FP16 dot products of dense_dots_f16.cpp with 512-bit registers, where
// AVX-512 is allowed. One register holds the two 8-lane sums the AVX2 kernels
// keep per row (lanes 0-7 the even blocks of 8, lanes 8-15 the odd ones), so
// every lane adds the same terms in the same order and the results are the
// same bits, with one load-and-widen and one FMA per 16 halves.

#include "dense_dots_f16_wide.h"

#include "count_dispatch.h"

#if defined(__x86_64__) && defined(__GNUC__)
// GCC 12's AVX-512 headers pass a self-initialized "undefined" vector where
// a mask would merge (GCC bug 105593, fixed in 13), which it reports at the
// header's lines once inlined: hence around the include.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

namespace quire::kernels::linear_detail {
namespace {

#define QUIRE_F16_WIDE __attribute__((target("avx512f,avx512dq,avx512vl,avx2,fma,f16c")))

QUIRE_F16_WIDE inline __m512 widen16(const std::uint16_t* p) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}

// The AVX2 kernels' final sum: their two 8-lane sums added, then the lanes.
QUIRE_F16_WIDE inline float finish(__m512 sums) {
  const __m256 v = _mm256_add_ps(_mm512_castps512_ps256(sums), _mm512_extractf32x8_ps(sums, 1));
  const __m128 pair = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 two = _mm_add_ps(pair, _mm_movehl_ps(pair, pair));
  return _mm_cvtss_f32(_mm_add_ss(two, _mm_movehdup_ps(two)));
}

}  // namespace

// One row at a time, the next fetched meanwhile into L2 (into L1 it read
// weights at 26-27 GB/s against 31-42 GB/s into L2: products of the 0.98B
// shape's 22 layers, every weight distinct, 2 threads of a Zen 4; decode of
// that shape 13.5 -> 15.5-16.6 tokens/s). Four rows at a time (as
// four_dots) read four streams of memory at once, and one thread of a Zen 4
// read only 10-15 GB/s of FP16 weights that way against 18-22 GB/s from one
// stream; decode of the 96M FP16 shape on two threads went from 110 to 155
// tokens/s. The single chain of sums is no limit: one FMA of 16 halves per
// four cycles is above what one thread reads from memory.
QUIRE_F16_WIDE void one_dot_wide(const float* x, const std::uint16_t* w, const std::uint16_t* next,
                                 std::int64_t k_count, float* out) {
  __m512 sum = _mm512_setzero_ps();
  std::int64_t k = 0;
  for (; k + 16 <= k_count; k += 16) {
    if (next != nullptr && k % 32 == 0)
      _mm_prefetch(reinterpret_cast<const char*>(next + k), _MM_HINT_T1);
    sum = _mm512_fmadd_ps(widen16(w + k), _mm512_loadu_ps(x + k), sum);
  }
  float total = finish(sum);
  for (; k < k_count; ++k)
    total += x[k] * _cvtsh_ss(w[k]);
  *out = total;
}

namespace {

template <int Inputs>
QUIRE_F16_WIDE inline void some_row_dots(const float* x, std::int64_t x_stride,
                                         const std::uint16_t* w, const std::uint16_t* next,
                                         std::int64_t k_count, float* out) {
  static_assert(Inputs >= 1 && Inputs <= 4);
  __m512 sum[Inputs];
  for (int r = 0; r < Inputs; ++r)
    sum[r] = _mm512_setzero_ps();
  std::int64_t k = 0;
  for (; k + 16 <= k_count; k += 16) {
    if (next != nullptr && k % 32 == 0)
      _mm_prefetch(reinterpret_cast<const char*>(next + k), _MM_HINT_T1);
    const __m512 weights = widen16(w + k);
#pragma GCC unroll 4
    for (int r = 0; r < Inputs; ++r)
      sum[r] = _mm512_fmadd_ps(weights, _mm512_loadu_ps(x + r * x_stride + k), sum[r]);
  }
  for (int r = 0; r < Inputs; ++r) {
    float total = finish(sum[r]);
    for (std::int64_t j = k; j < k_count; ++j)
      total += x[r * x_stride + j] * _cvtsh_ss(w[j]);
    out[r] = total;
  }
}

}  // namespace

QUIRE_F16_WIDE void row_dots_wide(int inputs, const float* x, std::int64_t x_stride,
                                  const std::uint16_t* w, const std::uint16_t* next,
                                  std::int64_t k_count, float* out) {
  with_count<4>(inputs, [&](auto i) { some_row_dots<i>(x, x_stride, w, next, k_count, out); });
}

namespace {

// Four weight rows (k_count apart) against Inputs input rows: 4 x Inputs
// sums in registers, each weight vector widened once for every input and
// each input vector loaded once for the four weight rows. Every sum adds its
// terms in one_dot_wide's order, so the bits are the same.
template <int Inputs>
QUIRE_F16_WIDE inline void block_dots(const float* x, std::int64_t x_stride, const std::uint16_t* w,
                                      const std::uint16_t* next, std::int64_t k_count, float* out) {
  static_assert(Inputs >= 1 && Inputs <= 4);
  __m512 sum[kBlockOutputs][Inputs];
  for (int o = 0; o < kBlockOutputs; ++o) {
    for (int r = 0; r < Inputs; ++r)
      sum[o][r] = _mm512_setzero_ps();
  }
  std::int64_t k = 0;
  for (; k + 16 <= k_count; k += 16) {
    if (next != nullptr && k % 32 == 0) {
      for (int o = 0; o < kBlockOutputs; ++o)
        _mm_prefetch(reinterpret_cast<const char*>(next + o * k_count + k), _MM_HINT_T1);
    }
    __m512 weights[kBlockOutputs];
    for (int o = 0; o < kBlockOutputs; ++o)
      weights[o] = widen16(w + o * k_count + k);
#pragma GCC unroll 4
    for (int r = 0; r < Inputs; ++r) {
      const __m512 input = _mm512_loadu_ps(x + r * x_stride + k);
      for (int o = 0; o < kBlockOutputs; ++o)
        sum[o][r] = _mm512_fmadd_ps(weights[o], input, sum[o][r]);
    }
  }
  for (int o = 0; o < kBlockOutputs; ++o) {
    for (int r = 0; r < Inputs; ++r) {
      float total = finish(sum[o][r]);
      for (std::int64_t j = k; j < k_count; ++j)
        total += x[r * x_stride + j] * _cvtsh_ss(w[o * k_count + j]);
      out[o * kBlockOutputs + r] = total;
    }
  }
}

}  // namespace

QUIRE_F16_WIDE void block_dots_wide(int inputs, const float* x, std::int64_t x_stride,
                                    const std::uint16_t* w, const std::uint16_t* next,
                                    std::int64_t k_count, float* out) {
  with_count<4>(inputs, [&](auto i) { block_dots<i>(x, x_stride, w, next, k_count, out); });
}

}  // namespace quire::kernels::linear_detail

#endif
