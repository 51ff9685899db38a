// The inputs of the integer EXL2 kernel: per group and input row, one scale
// and the inputs rounded to 16- or 8-bit multiples of it, laid out as the
// kernel reads them (exl2_integer_layout.h), plus zero * sum of the integers,
// which the kernel subtracts once instead of subtracting zero from every
// weight.

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "exl2_integer_layout.h"
#include "linear_internal.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define QUIRE_HAVE_EXL2_INTEGER_PATH 1
#endif

namespace quire::kernels::linear_detail {

bool exl2_integer_supported() {
#ifdef QUIRE_HAVE_EXL2_INTEGER_PATH
  static const bool supported = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return supported;
#else
  return false;
#endif
}

void exl2_integer_layout(const Exl2Weight& weight, int rows, std::int64_t in_features,
                         bool int8_groups, Exl2IntegerInputs& inputs) {
  inputs.int8_groups = int8_groups;
  const std::size_t groups = weight.groups.size();
  inputs.chunk_base.resize(groups);
  inputs.quad_base.resize(groups);
  inputs.chunks = 0;
  inputs.quads_per_row = 0;
  for (std::size_t g = 0; g < groups; ++g) {
    const Exl2Group& group = weight.groups[g];
    inputs.chunk_base[g] = inputs.chunks;
    inputs.chunks += (full_rows(group) + kChunkRows - 1) / kChunkRows;
    // Groups need not start at a multiple of four rows: each 8-bit group's
    // quads get their own place.
    inputs.quad_base[g] = inputs.quads_per_row;
    if (inputs.takes_int8(group)) inputs.quads_per_row += full_rows(group) / 4;
  }
  inputs.half_features = in_features / 2;
  // Quantization writes every value the kernel reads: no zero-filling.
  grow_to(inputs.pairs, std::size_t(rows * inputs.half_features));
  grow_to(inputs.quads, std::size_t(rows * inputs.quads_per_row));
  grow_to(inputs.scales, std::size_t(rows) * groups);
  grow_to(inputs.zero_sums, std::size_t(rows * inputs.chunks));
}

#ifdef QUIRE_HAVE_EXL2_INTEGER_PATH

namespace {

#define QUIRE_AVX2 __attribute__((target("avx2,fma"), always_inline)) inline

QUIRE_AVX2 __m256i load(const std::int32_t* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

// (low & 0xffff) | (high << 16) in each lane.
QUIRE_AVX2 __m256i combine(__m256i low, __m256i high) {
  return _mm256_or_si256(_mm256_and_si256(low, _mm256_set1_epi32(0xffff)),
                         _mm256_slli_epi32(high, 16));
}

// out[p] = the 16-bit inputs of pair p of each full block, low half first.
// The layouts of 2- and 4-bit values take a few vector operations per word;
// the others are picked through the pair table.
__attribute__((target("avx2,fma"))) void pair_inputs(const Exl2Group& group,
                                                     const std::int32_t* values,
                                                     std::int32_t* out) {
  const PairTable& pairs = pairs_for(group.bits);
  const int full = full_rows(group);
  for (int block = 0; block < full; block += 32) {
    const std::int32_t* v = values + block;
    __m256i* target = reinterpret_cast<__m256i*>(out + block / 2);
    if (group.bits == 2) {
      // Word w holds values 16w..16w+15; pairs 8w+i are (16w+i, 16w+8+i).
      _mm256_storeu_si256(target, combine(load(v), load(v + 8)));
      _mm256_storeu_si256(target + 1, combine(load(v + 16), load(v + 24)));
    } else if (group.bits == 4) {
      // Word w holds values 8w..8w+7; pairs 4w+i are (8w+i, 8w+4+i).
      for (int w = 0; w < 4; w += 2) {
        const __m256i a = load(v + 8 * w);
        const __m256i b = load(v + 8 * w + 8);
        _mm256_storeu_si256(target + w / 2, combine(_mm256_permute2x128_si256(a, b, 0x20),
                                                    _mm256_permute2x128_si256(a, b, 0x31)));
      }
    } else {
      for (std::size_t p = 0; p < pairs.size(); ++p) {
        const auto low = static_cast<std::uint16_t>(v[pairs[p].low]);
        const auto high = static_cast<std::uint16_t>(v[pairs[p].high]);
        out[block / 2 + int(p)] =
            static_cast<std::int32_t>(std::uint32_t(low) | (std::uint32_t(high) << 16));
      }
    }
  }
}

// The in-lane byte shuffle that takes a block's 32 inputs, as bytes in row
// order, to its quads (exl2_integer_layout.h): output byte 4q + m is the
// input of row quad_row(bits, q, m), which for 2 and 4 bits lies in the same
// 16-byte half of the block.
template <int Bits>
constexpr std::array<std::int8_t, 32> quad_shuffle() {
  std::array<std::int8_t, 32> control{};
  for (int p = 0; p < 32; ++p)
    control[std::size_t(p)] = static_cast<std::int8_t>(quad_row(Bits, p / 4, p % 4) - p / 16 * 16);
  return control;
}

template <int Bits>
constexpr bool quad_shuffle_stays_in_lanes() {
  for (const std::int8_t source : quad_shuffle<Bits>()) {
    if (source < 0 || source >= 16) return false;
  }
  return true;
}
static_assert(quad_shuffle_stays_in_lanes<2>() && quad_shuffle_stays_in_lanes<4>());

// The 32 integers at v (each within a signed byte) as bytes in their order.
QUIRE_AVX2 __m256i block_bytes(const std::int32_t* v) {
  // Packing works within 128-bit halves: the bytes come out as the dwords
  // of rows 0-3, 8-11, 16-19, 24-27 | 4-7, 12-15, 20-23, 28-31.
  const __m256i low = _mm256_packs_epi32(load(v), load(v + 8));
  const __m256i high = _mm256_packs_epi32(load(v + 16), load(v + 24));
  return _mm256_permutevar8x32_epi32(_mm256_packs_epi16(low, high),
                                     _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

// out[q] = the 8-bit inputs of quad q of each full block (2- or 4-bit groups).
// A scalar loop over the quads' bytes took a third as long as the products
// of sixteen decode rows.
template <int Bits>
__attribute__((target("avx2,fma"))) void quad_inputs(const std::int32_t* values, int full,
                                                     std::int32_t* out) {
  static constexpr std::array<std::int8_t, 32> control = quad_shuffle<Bits>();
  const __m256i shuffle = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(control.data()));
  for (int block = 0; block < full; block += 32) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + block / 4),
                        _mm256_shuffle_epi8(block_bytes(values + block), shuffle));
  }
}

// The largest magnitude of x[0, count), or NaN when any input is NaN or
// infinite (which max would drop or keep).
__attribute__((target("avx2,fma"))) float largest_magnitude(const float* x, int count) {
  const __m256 magnitude_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  __m256 largest8 = _mm256_setzero_ps();
  __m256 nan8 = _mm256_setzero_ps();
  int k = 0;
  for (; k + 8 <= count; k += 8) {
    const __m256 v = _mm256_loadu_ps(x + k);
    largest8 = _mm256_max_ps(largest8, _mm256_and_ps(v, magnitude_mask));
    nan8 = _mm256_or_ps(nan8, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
  }
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, largest8);
  float largest = *std::max_element(lanes, lanes + 8);
  bool has_nan = _mm256_movemask_ps(nan8) != 0;
  for (; k < count; ++k) {
    largest = std::max(largest, std::fabs(x[k]));
    has_nan = has_nan || std::isnan(x[k]);
  }
  if (has_nan || !std::isfinite(largest)) return std::numeric_limits<float>::quiet_NaN();
  return largest;
}

// values[k] = x[k] * limit / largest, rounded to the nearest integer (ties to
// even, the default mode).
__attribute__((target("avx2,fma"))) void round_inputs(const float* x, int count, float largest,
                                                      float limit, std::int32_t* values) {
  const __m256 inverse = _mm256_set1_ps(limit / largest);
  const __m256 high = _mm256_set1_ps(limit);
  const __m256 low = _mm256_set1_ps(-limit);
  int k = 0;
  for (; k + 8 <= count; k += 8) {
    const __m256 v = _mm256_mul_ps(_mm256_loadu_ps(x + k), inverse);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(values + k),
                        _mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(v, low), high)));
  }
  for (; k < count; ++k) {
    const float v = std::clamp(x[k] * (limit / largest), -limit, limit);
    values[k] = static_cast<std::int32_t>(std::nearbyint(v));
  }
}

}  // namespace

// The kernel sums q * x_i with wrapping 32-bit additions and subtracts
// zero * sum(x_i) at the end of each chunk. For 16-bit inputs the true value
// sum (q - zero) * x_i is at most 512 * 128 * 32767 < 2^31 in magnitude, so
// the wrapped result is exact; 8-bit inputs sum whole groups without wrapping
// (at most 16 * 127 per row).
void exl2_integer_quantize(const Exl2Weight& weight, const float* xp, int rows,
                           std::int64_t in_features, std::size_t first, std::size_t last,
                           Exl2IntegerInputs& inputs) {
  const std::size_t groups = weight.groups.size();
  std::vector<std::int32_t> values;
  for (int r = 0; r < rows; ++r) {
    for (std::size_t g = first; g < last; ++g) {
      const Exl2Group& group = weight.groups[g];
      const bool int8 = inputs.takes_int8(group);
      const float limit = int8 ? kInt8InputLimit : kInt16InputLimit;
      const float* x = xp + r * in_features + group.first_row;
      const float largest = largest_magnitude(x, group.rows);
      float& scale = inputs.scales[std::size_t(r) * groups + g];
      values.resize(std::size_t(group.rows));
      if (std::isnan(largest)) {
        // Inputs of zero and a NaN scale: the outputs become NaN, as the
        // float products' would.
        scale = std::numeric_limits<float>::quiet_NaN();
        std::fill(values.begin(), values.end(), 0);
      } else if (largest > 0.0f) {
        scale = largest / limit;
        round_inputs(x, group.rows, largest, limit, values.data());
      } else {
        scale = 0.0f;
        std::fill(values.begin(), values.end(), 0);
      }
      if (int8) {
        std::int32_t* quads = inputs.quads.data() + r * inputs.quads_per_row + inputs.quad_base[g];
        if (group.bits == 2) {
          quad_inputs<2>(values.data(), full_rows(group), quads);
        } else {
          quad_inputs<4>(values.data(), full_rows(group), quads);
        }
      } else {
        pair_inputs(group, values.data(),
                    inputs.pairs.data() + r * inputs.half_features + group.first_row / 2);
      }
      const std::uint32_t zero = 1u << (group.bits - 1);
      const int full = full_rows(group);
      const int chunk_rows = int8 ? full : kChunkRows;
      std::int32_t* zero_sums = inputs.zero_sums.data() + r * inputs.chunks + inputs.chunk_base[g];
      for (int chunk = 0; chunk * chunk_rows < full; ++chunk) {
        std::uint32_t sum = 0;
        for (int i = chunk * chunk_rows; i < std::min(full, (chunk + 1) * chunk_rows); ++i)
          sum += static_cast<std::uint32_t>(values[std::size_t(i)]);
        zero_sums[chunk] = static_cast<std::int32_t>(sum * zero);
      }
    }
  }
}

#else

void exl2_integer_quantize(const Exl2Weight&, const float*, int, std::int64_t, std::size_t,
                           std::size_t, Exl2IntegerInputs&) {
  throw std::logic_error("the integer EXL2 product needs AVX2");
}

#endif

}  // namespace quire::kernels::linear_detail
