// The inputs of an EXL3 product: each row times suh and rotated (the
// 128-point Hadamard transform per block), once per call, and for the
// integer kernels rounded to 8 bits per block of 128. A decode step's row is
// prepared by the calling thread alone, between two parallel loops, so it is
// vectorized by hand where the processor allows (AVX2, F16C).

#include <algorithm>
#include <cmath>

#include "exl3_kernels.h"
#include "quire/kernels/cpu/exl3_trellis.h"
#include "quire/kernels/cpu/half.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define QUIRE_HAVE_AVX2_INPUTS 1
#endif

namespace quire::kernels::linear_detail {
namespace {

// row[k] = x[k] * suh[k] for k < in, zero up to padded.
void scale_portable(const float* x, const std::uint16_t* suh, std::int64_t in, std::int64_t padded,
                    float* row) {
  for (std::int64_t k = 0; k < in; ++k)
    row[k] = x[k] * half_to_float(suh[k]);
  std::fill(row + in, row + padded, 0.0f);
}

// The sum of a rotated row, in double.
double sum_portable(const float* row, std::int64_t padded) {
  double sum = 0.0;
  for (std::int64_t k = 0; k < padded; ++k)
    sum += row[k];
  return sum;
}

// One block of 128 rounded to 8 bits: its scale, and the sum of its integers.
struct RoundedBlock {
  float scale = 0.0f;
  std::int64_t sum = 0;
};

// The block's largest magnitude maps to 127; lrintf rounds to nearest even,
// as the vector conversion does.
RoundedBlock round_portable(const float* values, std::int8_t* q) {
  float largest = 0.0f;
  for (int i = 0; i < kExl3InputBlock; ++i)
    largest = std::max(largest, std::fabs(values[i]));
  const float inverse = largest > 0.0f ? 127.0f / largest : 0.0f;
  RoundedBlock block{largest / 127.0f, 0};
  for (int i = 0; i < kExl3InputBlock; ++i) {
    const auto value = static_cast<std::int8_t>(std::lrintf(values[i] * inverse));
    q[i] = value;
    block.sum += value;
  }
  return block;
}

#ifdef QUIRE_HAVE_AVX2_INPUTS
__attribute__((target("avx2,fma,f16c"))) void scale_avx2(const float* x, const std::uint16_t* suh,
                                                         std::int64_t in, std::int64_t padded,
                                                         float* row) {
  std::int64_t k = 0;
  for (; k + 8 <= in; k += 8) {
    const __m256 signs =
        _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(suh + k)));
    _mm256_storeu_ps(row + k, _mm256_mul_ps(_mm256_loadu_ps(x + k), signs));
  }
  for (; k < in; ++k)
    row[k] = x[k] * half_to_float(suh[k]);
  std::fill(row + in, row + padded, 0.0f);
}

__attribute__((target("avx2,fma,f16c"))) double sum_avx2(const float* row, std::int64_t padded) {
  __m256d low = _mm256_setzero_pd();
  __m256d high = _mm256_setzero_pd();
  for (std::int64_t k = 0; k < padded; k += 8) {
    const __m256 values = _mm256_loadu_ps(row + k);
    low = _mm256_add_pd(low, _mm256_cvtps_pd(_mm256_castps256_ps128(values)));
    high = _mm256_add_pd(high, _mm256_cvtps_pd(_mm256_extractf128_ps(values, 1)));
  }
  alignas(32) double lanes[4];
  _mm256_store_pd(lanes, _mm256_add_pd(low, high));
  return (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
}

__attribute__((target("avx2,fma,f16c"))) RoundedBlock round_avx2(const float* values,
                                                                 std::int8_t* q) {
  const __m256 magnitude = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  __m256 largest = _mm256_setzero_ps();
  for (int i = 0; i < kExl3InputBlock; i += 8)
    largest = _mm256_max_ps(largest, _mm256_and_ps(_mm256_loadu_ps(values + i), magnitude));
  largest = _mm256_max_ps(largest, _mm256_permute2f128_ps(largest, largest, 0x01));
  largest = _mm256_max_ps(largest, _mm256_permute_ps(largest, 0x4e));
  largest = _mm256_max_ps(largest, _mm256_permute_ps(largest, 0xb1));
  const float top = _mm256_cvtss_f32(largest);
  const float inverse = top > 0.0f ? 127.0f / top : 0.0f;
  const __m256 times = _mm256_set1_ps(inverse);
  __m256i sums = _mm256_setzero_si256();
  for (int i = 0; i < kExl3InputBlock; i += 32) {
    __m256i v[4];
    for (int j = 0; j < 4; ++j) {
      // Rounded to nearest even, as lrintf in the default rounding mode.
      v[j] = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(values + i + 8 * j), times));
      sums = _mm256_add_epi32(sums, v[j]);
    }
    // Packing interleaves the 128-bit lanes; the permute puts the 32 bytes
    // back in order.
    const __m256i words = _mm256_packs_epi32(v[0], v[1]);
    const __m256i words2 = _mm256_packs_epi32(v[2], v[3]);
    const __m256i bytes = _mm256_packs_epi16(words, words2);
    const __m256i ordered =
        _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + i), ordered);
  }
  alignas(32) std::int32_t lanes[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), sums);
  RoundedBlock block{top / 127.0f, 0};
  for (const std::int32_t lane : lanes)
    block.sum += lane;
  return block;
}
#endif

struct InputKernels {
  void (*scale)(const float*, const std::uint16_t*, std::int64_t, std::int64_t,
                float*) = scale_portable;
  double (*sum)(const float*, std::int64_t) = sum_portable;
  RoundedBlock (*round)(const float*, std::int8_t*) = round_portable;
};

InputKernels choose_kernels() {
  InputKernels kernels;
#ifdef QUIRE_HAVE_AVX2_INPUTS
  if (exl3_avx2_supported()) {
    kernels.scale = scale_avx2;
    kernels.sum = sum_avx2;
    kernels.round = round_avx2;
  }
#endif
  return kernels;
}

}  // namespace

void exl3_prepare_inputs(ThreadPool& pool, const Product& product, const Exl3Weight& weight,
                         bool integers, Exl3Inputs& inputs) {
  static const InputKernels kernels = choose_kernels();
  const std::int64_t in = product.in_features;
  const std::int64_t padded = weight.padded_in;
  const std::int64_t blocks = padded / kExl3InputBlock;
  inputs.rows = static_cast<int>(product.rows);
  inputs.decode = product.kind == ProductRows::decode;
  inputs.padded_in = padded;
  grow_to(inputs.rotated, std::size_t(product.rows * padded));
  grow_to(inputs.row_sums, std::size_t(product.rows));
  if (integers) {
    grow_to(inputs.integers, std::size_t(product.rows * padded));
    grow_to(inputs.block_scales, std::size_t(product.rows * blocks));
  }
  const auto prepare_row = [&](std::int64_t r) {
    float* row = inputs.rotated.data() + r * padded;
    kernels.scale(product.x + r * in, weight.suh, in, padded, row);
    for (std::int64_t k = 0; k < padded; k += kExl3RotationSize)
      exl3_hadamard128(row + k);
    if (!integers) {
      inputs.row_sums[std::size_t(r)] = static_cast<float>(kernels.sum(row, padded));
      return;
    }
    // The integer kernels' offset term takes the sum of the rounded inputs:
    // their rounding errors then cancel between it and the byte sums
    // (whose mean times the scale is about minus the offset) rather than
    // shifting every output of the row alike.
    std::int8_t* q = inputs.integers.data() + r * padded;
    double rounded_sum = 0.0;
    for (std::int64_t b = 0; b < blocks; ++b) {
      const RoundedBlock block = kernels.round(row + b * kExl3InputBlock, q + b * kExl3InputBlock);
      inputs.block_scales[std::size_t(r * blocks + b)] = block.scale;
      rounded_sum += double(block.scale) * double(block.sum);
    }
    inputs.row_sums[std::size_t(r)] = static_cast<float>(rounded_sum);
  };
  // A single row is not worth a parallel loop's start and end.
  if (product.rows == 1) {
    prepare_row(0);
    return;
  }
  pool.parallel_for(product.rows, 4, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r)
      prepare_row(r);
  });
}

}  // namespace quire::kernels::linear_detail
