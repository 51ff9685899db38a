// EXL2 products of one to four input rows in integer arithmetic, with AVX2.
//
// The float kernel (linear_exl2_row.cpp) spends four instructions on every
// weight and input row: shift, mask, convert to float, multiply-add. Here the
// inputs of each group are scaled to 16-bit integers once per call, and the
// weights stay integers: vpmaddwd multiplies two 16-bit weights by two 16-bit
// inputs and adds the products, so sixteen products of eight columns cost one
// instruction, and for 2-, 4- and 8-bit values the two weights of a 32-bit
// lane come out of their packed word with a single shift and mask (value j at
// bit p pairs with the value at bit p + 16). The inputs are laid out in the
// same pairs, so each pair is one broadcast 32-bit load.
//
// Precision: an input is rounded to a multiple of its group's largest
// magnitude / 32767, an error of at most 1/65534 of that magnitude (the FP16
// activations of other engines err by up to 1/2048 of each value). The integer
// sums are exact, so the outputs do not depend on the order of the work.

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "linear_internal.h"
#include "packed_values.h"
#include "quire/kernels/cpu/exl2_scale.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define QUIRE_HAVE_EXL2_INT16_PATH 1
#endif

namespace quire::kernels::linear_detail {
namespace {

// Integer sums over more rows than this could leave 32 bits (see
// exl2_int16_quantize); longer groups are summed in chunks of this many rows.
constexpr int kChunkRows = 512;
constexpr float kInputLimit = 32767.0f;

// The two values of a 32-row block that share a 32-bit lane, the first in its
// low half: for 2, 4 and 8 bits values 16 bits apart in one word; otherwise
// neighbours.
struct ValuePair {
  int low = 0;
  int high = 0;
};
using PairTable = std::array<ValuePair, 16>;

constexpr PairTable make_pairs(int bits) {
  PairTable pairs{};
  if (16 % bits == 0) {
    const int per_word = 32 / bits;
    const int apart = 16 / bits;
    int p = 0;
    for (int word = 0; word < bits; ++word) {
      for (int i = 0; i < apart; ++i)
        pairs[std::size_t(p++)] = {word * per_word + i, word * per_word + i + apart};
    }
  } else {
    for (int p = 0; p < 16; ++p)
      pairs[std::size_t(p)] = {2 * p, 2 * p + 1};
  }
  return pairs;
}

template <int Bits>
inline constexpr PairTable kPairs = make_pairs(Bits);

const PairTable& pairs_for(int bits) {
  static constexpr std::array<PairTable, 9> tables = {PairTable{},   PairTable{},   make_pairs(2),
                                                      make_pairs(3), make_pairs(4), make_pairs(5),
                                                      make_pairs(6), PairTable{},   make_pairs(8)};
  return tables[std::size_t(bits)];
}

int full_rows(const Exl2Group& group) {
  return group.rows / 32 * 32;
}

}  // namespace

bool exl2_int16_supported() {
#ifdef QUIRE_HAVE_EXL2_INT16_PATH
  static const bool supported = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return supported;
#else
  return false;
#endif
}

Exl2Int16Inputs exl2_int16_layout(const Exl2Weight& weight, int rows, std::int64_t in_features) {
  Exl2Int16Inputs inputs;
  const std::size_t groups = weight.groups.size();
  inputs.chunk_base.resize(groups);
  for (std::size_t g = 0; g < groups; ++g) {
    inputs.chunk_base[g] = inputs.chunks;
    inputs.chunks += (full_rows(weight.groups[g]) + kChunkRows - 1) / kChunkRows;
  }
  inputs.half_features = in_features / 2;
  inputs.pairs.resize(std::size_t(rows * inputs.half_features));
  inputs.scales.resize(std::size_t(rows) * groups);
  inputs.zero_sums.resize(std::size_t(rows * inputs.chunks));
  return inputs;
}

#ifdef QUIRE_HAVE_EXL2_INT16_PATH

#define QUIRE_AVX2 __attribute__((target("avx2,fma"), always_inline)) inline

namespace {

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

// Value at bit `Bit` of a block's words, for eight columns, in bits [0, Bits).
template <int Bits, int Bit>
QUIRE_AVX2 __m256i value_low(const __m256i* w) {
  constexpr int word = Bit / 32;
  constexpr int shift = Bit % 32;
  __m256i v = _mm256_srli_epi32(w[word], shift);
  if constexpr (shift + Bits > 32)
    v = _mm256_or_si256(v, _mm256_slli_epi32(w[word + 1], 32 - shift));
  return _mm256_and_si256(v, _mm256_set1_epi32(int(kValueMask<Bits>)));
}

// The same value in bits [16, 16 + Bits).
template <int Bits, int Bit>
QUIRE_AVX2 __m256i value_high(const __m256i* w) {
  constexpr int word = Bit / 32;
  constexpr int shift = Bit % 32;
  const __m256i mask = _mm256_set1_epi32(int(kValueMask<Bits> << 16));
  if constexpr (shift + Bits > 32) {
    return _mm256_and_si256(_mm256_slli_epi32(value_low<Bits, Bit>(w), 16), mask);
  } else if constexpr (shift >= 16) {
    return _mm256_and_si256(_mm256_srli_epi32(w[word], shift - 16), mask);
  } else {
    return _mm256_and_si256(_mm256_slli_epi32(w[word], 16 - shift), mask);
  }
}

// Pair P of a block as two 16-bit weights per lane.
template <int Bits, int P>
QUIRE_AVX2 __m256i pair_lane(const __m256i* w) {
  constexpr int low = kPairs<Bits>[P].low * Bits;
  constexpr int high = kPairs<Bits>[P].high * Bits;
  if constexpr (high - low == 16 && low / 32 == (high + Bits - 1) / 32) {
    constexpr std::uint32_t mask = kValueMask<Bits> | (kValueMask<Bits> << 16);
    return _mm256_and_si256(_mm256_srli_epi32(w[low / 32], low % 32), _mm256_set1_epi32(int(mask)));
  } else {
    return _mm256_or_si256(value_low<Bits, low>(w), value_high<Bits, high>(w));
  }
}

// Running sums per input row: with one row, four keep the additions of
// consecutive pairs from waiting on each other.
template <int R>
inline constexpr int kParts = R == 1 ? 4 : (R == 2 ? 2 : 1);

template <int Bits, int R, int P>
QUIRE_AVX2 void add_pairs(const __m256i* w, const std::int32_t* const* x,
                          __m256i (*part)[kParts<R>]) {
  if constexpr (P < 16) {
    const __m256i lane = pair_lane<Bits, P>(w);
    for (int r = 0; r < R; ++r) {
      __m256i& sum = part[r][P % kParts<R>];
      sum = _mm256_add_epi32(sum, _mm256_madd_epi16(lane, _mm256_set1_epi32(x[r][P])));
    }
    add_pairs<Bits, R, P + 1>(w, x, part);
  }
}

template <int Bits, int B>
QUIRE_AVX2 void load_block(const std::uint32_t* block, std::int64_t stride, __m256i* w) {
  if constexpr (B < Bits) {
    w[B] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + B * stride));
    load_block<Bits, B + 1>(block, stride, w);
  }
}

struct Int16Call {
  const Exl2Weight& weight;
  std::int64_t columns;  // q_weight row length
  std::int64_t in_features;
  const float* xp;  // the inputs in quantized order, for short blocks
  const Exl2Int16Inputs& inputs;
};

// result[r][c] += scale[c] * sum (q - zero) * x for one group, R input rows and
// the columns below width.
template <int Bits, int R>
QUIRE_AVX2 void add_group(const Int16Call& call, std::size_t g, int width, float* result) {
  const Exl2Group& group = call.weight.groups[g];
  const Exl2Int16Inputs& inputs = call.inputs;
  const std::int64_t stride = call.columns;
  const std::uint32_t* words = call.weight.q_weight + group.q_row * stride;
  const int full = full_rows(group);
  const std::size_t groups = call.weight.groups.size();
  const std::int32_t* pairs[R];
  __m256 input_scale[R];
  for (int r = 0; r < R; ++r) {
    pairs[r] = inputs.pairs.data() + r * inputs.half_features + group.first_row / 2;
    input_scale[r] = _mm256_set1_ps(inputs.scales[std::size_t(r) * groups + g]);
  }
  const std::int32_t* zero_sums = inputs.zero_sums.data() + inputs.chunk_base[g];
  alignas(32) float table[16];
  exl2_scale_table(call.weight.q_scale_max[g], table);
  const __m256 low = _mm256_load_ps(table);
  const __m256 high = _mm256_load_ps(table + 8);
  const std::uint32_t* codes = call.weight.q_scale + std::int64_t(g) * (stride / 8);
  const __m256i nibble_shifts = _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28);
  for (int c = 0; c < width; c += 8) {
    __m256 sum[R];
    for (int r = 0; r < R; ++r)
      sum[r] = _mm256_setzero_ps();
    for (int k0 = 0, chunk = 0; k0 < full; k0 += kChunkRows, ++chunk) {
      __m256i part[R][kParts<R>];
      for (int r = 0; r < R; ++r) {
        for (int i = 0; i < kParts<R>; ++i)
          part[r][i] = _mm256_setzero_si256();
      }
      const int end = std::min(full, k0 + kChunkRows);
      for (int k = k0; k < end; k += 32) {
        __m256i w[Bits];
        load_block<Bits, 0>(words + std::int64_t(k / 32) * Bits * stride + c, stride, w);
        const std::int32_t* x[R];
        for (int r = 0; r < R; ++r)
          x[r] = pairs[r] + k / 2;
        add_pairs<Bits, R, 0>(w, x, part);
      }
      for (int r = 0; r < R; ++r) {
        __m256i total = part[r][0];
        for (int i = 1; i < kParts<R>; ++i)
          total = _mm256_add_epi32(total, part[r][i]);
        total = _mm256_sub_epi32(total, _mm256_set1_epi32(zero_sums[r * inputs.chunks + chunk]));
        sum[r] = _mm256_add_ps(sum[r], _mm256_cvtepi32_ps(total));
      }
    }
    const __m256i code =
        _mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32(int(codes[c / 8])), nibble_shifts),
                         _mm256_set1_epi32(15));
    // Codes 8..15 come from the high half: bit 3 of the code, moved to the
    // sign bit, picks it.
    const __m256 scale =
        _mm256_blendv_ps(_mm256_permutevar8x32_ps(low, code), _mm256_permutevar8x32_ps(high, code),
                         _mm256_castsi256_ps(_mm256_slli_epi32(code, 28)));
    for (int r = 0; r < R; ++r) {
      __m256 value = _mm256_mul_ps(input_scale[r], sum[r]);
      if (full < group.rows) {
        // A short last block (a group of fewer than 32 rows) in float.
        alignas(32) float tail[8] = {};
        accumulate_block<Bits, 8>(words + std::int64_t(full / 32) * Bits * stride + c, stride,
                                  call.xp + r * call.in_features + group.first_row + full,
                                  group.rows - full, 1 << (Bits - 1), tail);
        value = _mm256_add_ps(value, _mm256_load_ps(tail));
      }
      float* out = result + r * width + c;
      _mm256_storeu_ps(out, _mm256_fmadd_ps(scale, value, _mm256_loadu_ps(out)));
    }
  }
}

template <int R>
__attribute__((target("avx2,fma"))) void multiply_slice(const Int16Call& call, std::size_t first,
                                                        std::size_t last, int width, float* out) {
  std::fill(out, out + R * width, 0.0f);
  for (std::size_t g = first; g < last; ++g) {
    switch (call.weight.groups[g].bits) {
      case 2:
        add_group<2, R>(call, g, width, out);
        break;
      case 3:
        add_group<3, R>(call, g, width, out);
        break;
      case 4:
        add_group<4, R>(call, g, width, out);
        break;
      case 5:
        add_group<5, R>(call, g, width, out);
        break;
      case 6:
        add_group<6, R>(call, g, width, out);
        break;
      default:
        add_group<8, R>(call, g, width, out);
        break;
    }
  }
}

}  // namespace

// Per group and input row: scale = max |x| / 32767 and x_i = round(x / scale),
// paired as the kernel reads them. The kernel sums q * x_i with wrapping
// 32-bit additions and subtracts zero * sum(x_i) at the end of each chunk; the
// true value sum (q - zero) * x_i is at most 512 * 128 * 32767 < 2^31 in
// magnitude, so the wrapped result is exact.
__attribute__((target("avx2,fma"))) void exl2_int16_quantize(const Exl2Weight& weight,
                                                             const float* xp, int rows,
                                                             std::int64_t in_features,
                                                             std::size_t first, std::size_t last,
                                                             Exl2Int16Inputs& inputs) {
  const std::size_t groups = weight.groups.size();
  std::vector<std::int32_t> values;
  const __m256 magnitude_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  for (int r = 0; r < rows; ++r) {
    for (std::size_t g = first; g < last; ++g) {
      const Exl2Group& group = weight.groups[g];
      const float* x = xp + r * in_features + group.first_row;
      // The largest magnitude, and whether any input is NaN (which max
      // would drop).
      __m256 largest8 = _mm256_setzero_ps();
      __m256 nan8 = _mm256_setzero_ps();
      int k = 0;
      for (; k + 8 <= group.rows; k += 8) {
        const __m256 v = _mm256_loadu_ps(x + k);
        largest8 = _mm256_max_ps(largest8, _mm256_and_ps(v, magnitude_mask));
        nan8 = _mm256_or_ps(nan8, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
      }
      alignas(32) float lanes[8];
      _mm256_store_ps(lanes, largest8);
      float largest = *std::max_element(lanes, lanes + 8);
      bool has_nan = _mm256_movemask_ps(nan8) != 0;
      for (; k < group.rows; ++k) {
        largest = std::max(largest, std::fabs(x[k]));
        has_nan = has_nan || std::isnan(x[k]);
      }
      float& scale = inputs.scales[std::size_t(r) * groups + g];
      values.assign(std::size_t(group.rows), 0);
      if (has_nan || !std::isfinite(largest)) {
        // Inputs of zero and a NaN scale: the outputs become NaN, as the
        // float products' would.
        scale = std::numeric_limits<float>::quiet_NaN();
      } else if (largest > 0.0f) {
        scale = largest / kInputLimit;
        const __m256 inverse = _mm256_set1_ps(kInputLimit / largest);
        const __m256 high = _mm256_set1_ps(kInputLimit);
        const __m256 low = _mm256_set1_ps(-kInputLimit);
        k = 0;
        for (; k + 8 <= group.rows; k += 8) {
          // Rounded to the nearest integer, ties to even (the default mode).
          const __m256 v = _mm256_mul_ps(_mm256_loadu_ps(x + k), inverse);
          _mm256_storeu_si256(reinterpret_cast<__m256i*>(values.data() + k),
                              _mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(v, low), high)));
        }
        for (; k < group.rows; ++k) {
          const float v = std::clamp(x[k] * (kInputLimit / largest), -kInputLimit, kInputLimit);
          values[std::size_t(k)] = static_cast<std::int32_t>(std::nearbyint(v));
        }
      } else {
        scale = 0.0f;
      }
      pair_inputs(group, values.data(),
                  inputs.pairs.data() + r * inputs.half_features + group.first_row / 2);
      const std::uint32_t zero = 1u << (group.bits - 1);
      const int full = full_rows(group);
      for (int chunk = 0; chunk * kChunkRows < full; ++chunk) {
        std::uint32_t sum = 0;
        for (int i = chunk * kChunkRows; i < std::min(full, (chunk + 1) * kChunkRows); ++i)
          sum += static_cast<std::uint32_t>(values[std::size_t(i)]);
        inputs.zero_sums[std::size_t(r * inputs.chunks + inputs.chunk_base[g] + chunk)] =
            static_cast<std::int32_t>(sum * zero);
      }
    }
  }
}

void exl2_int16_slice(const Exl2Weight& weight, std::int64_t columns, std::int64_t in_features,
                      const float* xp, const Exl2Int16Inputs& inputs, int rows, std::size_t first,
                      std::size_t last, int width, float* out) {
  const Int16Call call{weight, columns, in_features, xp, inputs};
  switch (rows) {
    case 1:
      multiply_slice<1>(call, first, last, width, out);
      break;
    case 2:
      multiply_slice<2>(call, first, last, width, out);
      break;
    case 3:
      multiply_slice<3>(call, first, last, width, out);
      break;
    default:
      multiply_slice<4>(call, first, last, width, out);
      break;
  }
}

#else

void exl2_int16_quantize(const Exl2Weight&, const float*, int, std::int64_t, std::size_t,
                         std::size_t, Exl2Int16Inputs&) {
  throw std::logic_error("the integer EXL2 product needs AVX2");
}

void exl2_int16_slice(const Exl2Weight&, std::int64_t, std::int64_t, const float*,
                      const Exl2Int16Inputs&, int, std::size_t, std::size_t, int, float*) {
  throw std::logic_error("the integer EXL2 product needs AVX2");
}

#endif

}  // namespace quire::kernels::linear_detail
