// Dot products of a few FP32 inputs with FP8 (E4M3) weight rows: the decode
// steps of compressed-tensors' FP8 checkpoints. Widening each code through
// the 256-entry table is a scalar load per weight, which no compiler turns
// into vector code: decode of the 96M benchmark shape ran at 59 tokens/s
// against FP16's 170, with half the bytes to read.
//
// Here sixteen codes become FP16 bits in 16-bit lanes and then floats with
// F16C. An E4M3 code s.eeee.mmm shifted left by 7 is the half
// s.0eeee.mmm0000000, whose value is the code's times 2^-8 for every normal
// and subnormal code alike (both formats put their subnormals at exponent
// field 0); the sums are multiplied by 2^8 at the end, which is exact. The
// NaN codes (s.1111.111) are given the half's NaN exponent, so they stay NaN
// as the table gives them.

#include <algorithm>
#include <stdexcept>

#if defined(__x86_64__) && defined(__GNUC__)
// GCC 12's AVX-512 headers pass a self-initialized "undefined" vector where
// a mask would merge (GCC bug 105593, fixed in 13), which it reports at the
// header's lines once inlined: hence around the include.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#define QUIRE_HAVE_FP8_DOTS 1
#endif

#include "count_dispatch.h"
#include "lane_sums.h"
#include "linear_internal.h"
#include "quire/kernels/cpu/simd.h"
#include "quire/kernels/fp8.h"
#include "row_walk.h"

namespace quire::kernels::linear_detail {
namespace {

#ifdef QUIRE_HAVE_FP8_DOTS
#define QUIRE_FP8_DOTS __attribute__((target("avx2,fma,f16c")))

// What the vector path's sums are, against the codes' own values.
constexpr float kUnscale = 256.0f;
// The row this far ahead is fetched while one is multiplied: an FP8 row is
// read in half the time of an FP16 one, and one row ahead left decode about
// 3% slower (96M shape, 2 threads of a Zen 4; four and eight ahead no faster).
constexpr std::int64_t kAhead = 2;

// Sixteen codes as the halves of their values times 2^-8.
QUIRE_FP8_DOTS inline __m256i code_halves(const std::uint8_t* p) {
  const __m256i codes = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  const __m256i magnitude =
      _mm256_and_si256(_mm256_slli_epi16(codes, 7), _mm256_set1_epi16(0x3F80));
  const __m256i sign =
      _mm256_and_si256(_mm256_slli_epi16(codes, 8), _mm256_set1_epi16(static_cast<short>(0x8000)));
  const __m256i nan =
      _mm256_cmpeq_epi16(_mm256_and_si256(codes, _mm256_set1_epi16(0x7F)), _mm256_set1_epi16(0x7F));
  return _mm256_or_si256(_mm256_or_si256(magnitude, sign),
                         _mm256_and_si256(nan, _mm256_set1_epi16(0x7C00)));
}

// out[r] = x[r] . w for up to four inputs (x_stride apart) and one weight
// row: the even and odd blocks of eight in sums of their own, added at the
// end, so a row's sum is formed the same way for any number of inputs. The
// row at `next` is fetched meanwhile, as the FP16 kernels do.
template <int Inputs>
QUIRE_FP8_DOTS void fp8_dots(const float* x, std::int64_t x_stride, const std::uint8_t* w,
                             const std::uint8_t* next, std::int64_t k_count, float* out) {
  static_assert(Inputs >= 1 && Inputs <= 4);
  __m256 a[Inputs];
  __m256 b[Inputs];
  for (int r = 0; r < Inputs; ++r) {
    a[r] = _mm256_setzero_ps();
    b[r] = _mm256_setzero_ps();
  }
  std::int64_t k = 0;
  for (; k + 16 <= k_count; k += 16) {
    if (next != nullptr && k % 64 == 0)
      _mm_prefetch(reinterpret_cast<const char*>(next + k), _MM_HINT_T0);
    const __m256i halves = code_halves(w + k);
    const __m256 lo = _mm256_cvtph_ps(_mm256_castsi256_si128(halves));
    const __m256 hi = _mm256_cvtph_ps(_mm256_extracti128_si256(halves, 1));
#pragma GCC unroll 4
    for (int r = 0; r < Inputs; ++r) {
      a[r] = _mm256_fmadd_ps(lo, _mm256_loadu_ps(x + r * x_stride + k), a[r]);
      b[r] = _mm256_fmadd_ps(hi, _mm256_loadu_ps(x + r * x_stride + k + 8), b[r]);
    }
  }
  for (int r = 0; r < Inputs; ++r) {
    float sum = horizontal_sum(_mm256_add_ps(a[r], b[r]));
    for (std::int64_t j = k; j < k_count; ++j)
      sum += x[r * x_stride + j] * (e4m3_to_float(w[j]) / kUnscale);
    out[r] = sum * kUnscale;
  }
}

// fp8_dots with 512-bit registers, where AVX-512 is allowed (fp8_block_wide
// below): 32 codes to 32 halves per step, then two sets of 16 floats, which
// halves the instructions per weight that decode, not memory, was bound by.
// Its sums are taken in another order than fp8_dots' (16 lanes, the two
// halves of 32 codes apart), the same for any number of inputs.
#define QUIRE_FP8_WIDE __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx2,fma,f16c")))

QUIRE_FP8_WIDE inline __m512i wide_code_halves(const std::uint8_t* p) {
  const __m512i codes =
      _mm512_cvtepu8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  const __m512i magnitude =
      _mm512_and_si512(_mm512_slli_epi16(codes, 7), _mm512_set1_epi16(0x3F80));
  const __m512i sign =
      _mm512_and_si512(_mm512_slli_epi16(codes, 8), _mm512_set1_epi16(static_cast<short>(0x8000)));
  const __mmask32 nan = _mm512_cmpeq_epi16_mask(_mm512_and_si512(codes, _mm512_set1_epi16(0x7F)),
                                                _mm512_set1_epi16(0x7F));
  const __m512i halves = _mm512_or_si512(magnitude, sign);
  return _mm512_mask_mov_epi16(halves, nan, _mm512_or_si512(halves, _mm512_set1_epi16(0x7C00)));
}

QUIRE_FP8_WIDE inline float wide_sum(__m512 v) {
  const __m256 half = _mm256_add_ps(_mm512_castps512_ps256(v), _mm512_extractf32x8_ps(v, 1));
  return horizontal_sum(half);
}

// Weight rows a block of several jobs' decode takes at a time. Widening the
// codes is most of an FP8 product's work, so each weight vector serves four
// inputs; two weight rows then share each input vector. Four weight rows
// against two inputs made four jobs about a fifth slower than one row
// against four; two against four made sixteen jobs 10-25% faster than one
// row at a time (96M shape, 2 threads of a Zen 4).
constexpr int kBlockRows = 2;

// out[o * 4 + r] = x[r] . w[o] for Rows weight rows (k_count apart, the
// `next` ones fetched meanwhile) and one to four inputs. Every sum is formed
// the same way (the halves of each 32 codes in sums of their own, added at
// the end), so a job's outputs are the same bits whichever Rows and Inputs
// the step took.
template <int Rows, int Inputs>
QUIRE_FP8_WIDE void fp8_block_wide(const float* x, std::int64_t x_stride, const std::uint8_t* w,
                                   const std::uint8_t* next, std::int64_t k_count, float* out) {
  static_assert(Inputs >= 1 && Inputs <= 4);
  __m512 a[Rows][Inputs];
  __m512 b[Rows][Inputs];
  for (int o = 0; o < Rows; ++o) {
    for (int r = 0; r < Inputs; ++r) {
      a[o][r] = _mm512_setzero_ps();
      b[o][r] = _mm512_setzero_ps();
    }
  }
  std::int64_t k = 0;
  for (; k + 32 <= k_count; k += 32) {
    if (next != nullptr && k % 64 == 0) {
      for (int o = 0; o < Rows; ++o)
        _mm_prefetch(reinterpret_cast<const char*>(next + o * k_count + k), _MM_HINT_T1);
    }
    __m512 lo[Rows];
    __m512 hi[Rows];
    for (int o = 0; o < Rows; ++o) {
      const __m512i halves = wide_code_halves(w + o * k_count + k);
      lo[o] = _mm512_cvtph_ps(_mm512_castsi512_si256(halves));
      hi[o] = _mm512_cvtph_ps(_mm512_extracti64x4_epi64(halves, 1));
    }
    for (int r = 0; r < Inputs; ++r) {
      const __m512 x_lo = _mm512_loadu_ps(x + r * x_stride + k);
      const __m512 x_hi = _mm512_loadu_ps(x + r * x_stride + k + 16);
      for (int o = 0; o < Rows; ++o) {
        a[o][r] = _mm512_fmadd_ps(lo[o], x_lo, a[o][r]);
        b[o][r] = _mm512_fmadd_ps(hi[o], x_hi, b[o][r]);
      }
    }
  }
  for (int o = 0; o < Rows; ++o) {
    for (int r = 0; r < Inputs; ++r) {
      float sum = wide_sum(_mm512_add_ps(a[o][r], b[o][r]));
      for (std::int64_t j = k; j < k_count; ++j)
        sum += x[r * x_stride + j] * (e4m3_to_float(w[o * k_count + j]) / kUnscale);
      out[o * 4 + r] = sum * kUnscale;
    }
  }
}
#endif

// fp8_dots<Inputs>, or its 512-bit twin for one weight row.
template <int Inputs>
void dots(bool wide, const float* x, std::int64_t x_stride, const std::uint8_t* w,
          const std::uint8_t* next, std::int64_t k_count, float* out) {
#ifdef QUIRE_HAVE_FP8_DOTS
  if (wide) return fp8_block_wide<1, Inputs>(x, x_stride, w, next, k_count, out);
  fp8_dots<Inputs>(x, x_stride, w, next, k_count, out);
#endif
}

}  // namespace

void fp8_row_dots(const float* x, std::int64_t rows, const std::uint8_t* w, std::int64_t k_count,
                  std::int64_t begin, std::int64_t end, float* out) {
#ifdef QUIRE_HAVE_FP8_DOTS
  if (!f16_dots_available()) throw std::logic_error("fp8_row_dots: no AVX2, FMA and F16C");
  static const bool wide = wide_vectors_allowed();
  walk_rows<kBlockRows>(
      RowWalk<std::uint8_t>{x, rows, w, k_count, begin, end, out}, wide && rows >= 2, kAhead,
      [&](std::int64_t inputs, const float* xr, const std::uint8_t* block,
          const std::uint8_t* fetch, float* sums) {
        with_count<4>(inputs, [&](auto i) {
          fp8_block_wide<kBlockRows, i>(xr, k_count, block, fetch, k_count, sums);
        });
      },
      [&](std::int64_t inputs, const float* xr, const std::uint8_t* row, const std::uint8_t* fetch,
          float* sums) {
        with_count<4>(inputs,
                      [&](auto i) { dots<i>(wide, xr, k_count, row, fetch, k_count, sums); });
      });
#else
  (void)x, (void)rows, (void)w, (void)k_count, (void)begin, (void)end, (void)out;
  throw std::logic_error("fp8_row_dots: no AVX2, FMA and F16C");
#endif
}

}  // namespace quire::kernels::linear_detail
