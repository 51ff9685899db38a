// EXL2 products of one to four input rows in integer arithmetic, with AVX2.
//
// The float kernel (linear_exl2_row.cpp) spends four instructions on every
// weight and input row: shift, mask, convert to float, multiply-add. Here the
// inputs of each group are scaled to integers once per call
// (linear_exl2_integer_inputs.cpp), and the weights stay integers:
//  - 16-bit inputs: vpmaddwd multiplies two 16-bit weights by two 16-bit
//    inputs and adds the products, so sixteen products of eight columns cost
//    one instruction, and for 2-, 4- and 8-bit values the two weights of a
//    32-bit lane come out of their packed word with a single shift and mask.
//  - 8-bit inputs (2- and 4-bit groups): vpmaddubsw multiplies four unsigned
//    byte weights by four signed byte inputs, thirty-two products of eight
//    columns per instruction, and one shift and mask frees four weights. Its
//    16-bit sums add up without overflow over a 32-row block (at most
//    8 * 2 * 15 * 127 = 30480); vpmaddwd by ones then widens them.
// See exl2_integer_layout.h for the layouts and linear_internal.h for the
// precision.

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "exl2_integer_layout.h"
#include "linear_internal.h"
#include "packed_values.h"
#include "quire/kernels/cpu/exl2_scale.h"
#include "quire/kernels/cpu/pair_products.h"

#if defined(__x86_64__) && defined(__GNUC__)
// GCC 12's AVX-512 intrinsics pass a self-initialized "undefined" vector
// where a mask would merge, which -Wmaybe-uninitialized reports in the
// header once inlined (GCC bug 105593, fixed in 13). The state at the
// header's lines is what counts, hence around the include.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#define QUIRE_HAVE_EXL2_INTEGER_PATH 1
#endif

namespace quire::kernels::linear_detail {

#ifdef QUIRE_HAVE_EXL2_INTEGER_PATH

#define QUIRE_AVX2 __attribute__((target("avx2,fma"), always_inline)) inline

namespace {

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

// The four 8-bit weights of quad J of a block: word J / (8 / Bits), shifted.
template <int Bits, int J>
QUIRE_AVX2 __m256i quad_lane(const __m256i* w) {
  constexpr int per_byte = 8 / Bits;
  constexpr int shift = (J % per_byte) * Bits;
  constexpr std::uint32_t mask = 0x01010101u * kValueMask<Bits>;
  const __m256i word = w[J / per_byte];
  if constexpr (shift == 0) {
    return _mm256_and_si256(word, _mm256_set1_epi32(int(mask)));
  } else {
    return _mm256_and_si256(_mm256_srli_epi32(word, shift), _mm256_set1_epi32(int(mask)));
  }
}

// 16-bit sums of the eight quads of a block; R rows.
template <int Bits, int R, int J>
QUIRE_AVX2 void add_quads(const __m256i* w, const std::int32_t* const* x, __m256i* sum) {
  if constexpr (J < 8) {
    const __m256i lane = quad_lane<Bits, J>(w);
    for (int r = 0; r < R; ++r)
      sum[r] = _mm256_add_epi16(sum[r], _mm256_maddubs_epi16(lane, _mm256_set1_epi32(x[r][J])));
    add_quads<Bits, R, J + 1>(w, x, sum);
  }
}

struct IntegerCall {
  const Exl2Weight& weight;
  std::int64_t columns;  // q_weight row length
  std::int64_t in_features;
  const float* xp;  // the inputs in quantized order, for short blocks
  const Exl2IntegerInputs& inputs;
  int first_row;  // of the (at most four) input rows a kernel call takes

  // Where input row r of the call is in the inputs.
  int row(int r) const { return first_row + r; }
};

// sum[r] = sum (q - zero) * x_i over the full blocks of group g for the eight
// columns at c, with 16-bit inputs.
template <int Bits, int R>
QUIRE_AVX2 void int16_sums(const IntegerCall& call, std::size_t g, int c, __m256* sum) {
  const Exl2Group& group = call.weight.groups[g];
  const Exl2IntegerInputs& inputs = call.inputs;
  const std::int64_t stride = call.columns;
  const std::uint32_t* words = call.weight.q_weight + group.q_row * stride + c;
  const int full = full_rows(group);
  const std::int32_t* zero_sums = inputs.zero_sums.data() + inputs.chunk_base[g];
  const std::int32_t* pairs[R];
  for (int r = 0; r < R; ++r) {
    pairs[r] = inputs.pairs.data() + call.row(r) * inputs.half_features + group.first_row / 2;
    sum[r] = _mm256_setzero_ps();
  }
  for (int k0 = 0, chunk = 0; k0 < full; k0 += kChunkRows, ++chunk) {
    __m256i part[R][kParts<R>];
    for (int r = 0; r < R; ++r) {
      for (int i = 0; i < kParts<R>; ++i)
        part[r][i] = _mm256_setzero_si256();
    }
    const int end = std::min(full, k0 + kChunkRows);
    for (int k = k0; k < end; k += 32) {
      __m256i w[Bits];
      load_block<Bits, 0>(words + std::int64_t(k / 32) * Bits * stride, stride, w);
      const std::int32_t* x[R];
      for (int r = 0; r < R; ++r)
        x[r] = pairs[r] + k / 2;
      add_pairs<Bits, R, 0>(w, x, part);
    }
    for (int r = 0; r < R; ++r) {
      __m256i total = part[r][0];
      for (int i = 1; i < kParts<R>; ++i)
        total = _mm256_add_epi32(total, part[r][i]);
      total = _mm256_sub_epi32(total,
                               _mm256_set1_epi32(zero_sums[call.row(r) * inputs.chunks + chunk]));
      sum[r] = _mm256_add_ps(sum[r], _mm256_cvtepi32_ps(total));
    }
  }
}

// The same with 8-bit inputs (2- and 4-bit groups). Whole groups sum in 32
// bits without overflow, so there are no chunks.
template <int Bits, int R>
QUIRE_AVX2 void int8_sums(const IntegerCall& call, std::size_t g, int c, __m256* sum) {
  const Exl2Group& group = call.weight.groups[g];
  const Exl2IntegerInputs& inputs = call.inputs;
  const std::int64_t stride = call.columns;
  const std::uint32_t* words = call.weight.q_weight + group.q_row * stride + c;
  const int full = full_rows(group);
  const std::int32_t* quads[R];
  __m256i total[R];
  for (int r = 0; r < R; ++r) {
    quads[r] = inputs.quads.data() + call.row(r) * inputs.quads_per_row + inputs.quad_base[g];
    total[r] = _mm256_setzero_si256();
  }
  const __m256i ones = _mm256_set1_epi16(1);
  for (int k = 0; k < full; k += 32) {
    __m256i w[Bits];
    load_block<Bits, 0>(words + std::int64_t(k / 32) * Bits * stride, stride, w);
    const std::int32_t* x[R];
    __m256i block[R];
    for (int r = 0; r < R; ++r) {
      x[r] = quads[r] + k / 4;
      block[r] = _mm256_setzero_si256();
    }
    add_quads<Bits, R, 0>(w, x, block);
    for (int r = 0; r < R; ++r)
      total[r] = _mm256_add_epi32(total[r], _mm256_madd_epi16(block[r], ones));
  }
  for (int r = 0; r < R; ++r) {
    // A group shorter than one block has no zero sum (and no integer sum).
    const std::int32_t zero_sum =
        full == 0
            ? 0
            : inputs.zero_sums[std::size_t(call.row(r) * inputs.chunks + inputs.chunk_base[g])];
    sum[r] = _mm256_cvtepi32_ps(_mm256_sub_epi32(total[r], _mm256_set1_epi32(zero_sum)));
  }
}

// The packed rows of the group after g, fetched into L2 while g is
// multiplied, a cache line of each row per 16 columns: streams of a few KiB
// that start anew at every group kept the loads waiting on memory (decode of
// the 4.0 bpw benchmark model about 10% faster). Prefetching along the
// current rows instead made it slower.
class NextGroupPrefetch {
 public:
  NextGroupPrefetch(const IntegerCall& call, std::size_t g) : stride_(call.columns) {
    if (g + 1 >= call.weight.groups.size()) return;
    const Exl2Group& next = call.weight.groups[g + 1];
    words_ = call.weight.q_weight + next.q_row * stride_;
    rows_ = full_rows(next) / 32 * next.bits;
  }

  // The line of every row that holds column c (a multiple of 16).
  QUIRE_AVX2 void fetch(int c) const {
    for (int row = 0; row < rows_; ++row)
      _mm_prefetch(reinterpret_cast<const char*>(words_ + row * stride_ + c), _MM_HINT_T1);
  }

 private:
  std::int64_t stride_;
  const std::uint32_t* words_ = nullptr;
  int rows_ = 0;
};

// tail[0, Width) = sum (q - zero) * x over the rows of group g after its last
// whole 32-row block (a group of fewer than 32 rows), in float, for input row
// r and the Width columns at c.
template <int Bits, int Width>
QUIRE_AVX2 void short_block_sums(const IntegerCall& call, const Exl2Group& group, int r, int c,
                                 float* tail) {
  const int full = full_rows(group);
  std::fill(tail, tail + Width, 0.0f);
  accumulate_block<Bits, Width>(
      call.weight.q_weight + (group.q_row + full / 32 * Bits) * call.columns + c, call.columns,
      call.xp + call.row(r) * call.in_features + group.first_row + full, group.rows - full,
      1 << (Bits - 1), tail);
}

// result[r][c] += scale[c] * sum (q - zero) * x for one group, R input rows and
// the columns below width.
template <int Bits, int R, bool Int8>
QUIRE_AVX2 void add_group(const IntegerCall& call, std::size_t g, int first_column, int width,
                          float* result) {
  const Exl2Group& group = call.weight.groups[g];
  const std::int64_t stride = call.columns;
  const int full = full_rows(group);
  const std::size_t groups = call.weight.groups.size();
  __m256 input_scale[R];
  for (int r = 0; r < R; ++r)
    input_scale[r] = _mm256_set1_ps(call.inputs.scales[std::size_t(call.row(r)) * groups + g]);
  alignas(32) float table[16];
  exl2_scale_table(call.weight.q_scale_max[g], table);
  const __m256 low = _mm256_load_ps(table);
  const __m256 high = _mm256_load_ps(table + 8);
  const std::uint32_t* codes = call.weight.q_scale + std::int64_t(g) * (stride / 8);
  const __m256i nibble_shifts = _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28);
  const NextGroupPrefetch prefetch(call, g);
  for (int c = first_column; c < width; c += 8) {
    if (c % 16 == 0) prefetch.fetch(c);
    __m256 sum[R];
    if constexpr (Int8) {
      int8_sums<Bits, R>(call, g, c, sum);
    } else {
      int16_sums<Bits, R>(call, g, c, sum);
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
        alignas(32) float tail[8];
        short_block_sums<Bits, 8>(call, group, r, c, tail);
        value = _mm256_add_ps(value, _mm256_load_ps(tail));
      }
      float* out = result + r * width + c;
      _mm256_storeu_ps(out, _mm256_fmadd_ps(scale, value, _mm256_loadu_ps(out)));
    }
  }
}

// Groups of other widths, and the 8-bit-input groups' last eight columns when
// the wide kernel below has taken the rest, go through add_group.
template <int R>
QUIRE_AVX2 void add_any_group(const IntegerCall& call, std::size_t g, int first_column, int width,
                              float* out) {
  const bool int8 = call.inputs.takes_int8(call.weight.groups[g]);
  switch (call.weight.groups[g].bits) {
    case 2:
      if (int8) {
        add_group<2, R, true>(call, g, first_column, width, out);
      } else {
        add_group<2, R, false>(call, g, first_column, width, out);
      }
      break;
    case 3:
      add_group<3, R, false>(call, g, first_column, width, out);
      break;
    case 4:
      if (int8) {
        add_group<4, R, true>(call, g, first_column, width, out);
      } else {
        add_group<4, R, false>(call, g, first_column, width, out);
      }
      break;
    case 5:
      add_group<5, R, false>(call, g, first_column, width, out);
      break;
    case 6:
      add_group<6, R, false>(call, g, first_column, width, out);
      break;
    default:
      add_group<8, R, false>(call, g, first_column, width, out);
      break;
  }
}

template <int R>
__attribute__((target("avx2,fma"))) void multiply_slice(const IntegerCall& call, std::size_t first,
                                                        std::size_t last, int width, float* out) {
  std::fill(out, out + R * width, 0.0f);
  for (std::size_t g = first; g < last; ++g)
    add_any_group<R>(call, g, 0, width, out);
}

// The 8-bit-input kernel again with 512-bit registers (AVX-512BW), sixteen
// columns at a time. Zen 4 and most Intel server processors split a 512-bit
// multiply into two 256-bit halves, so the arithmetic costs the same; what
// halves is everything done once per eight columns in add_group: decoding
// the scale codes, converting and scaling the sums, loading and storing the
// outputs, the loop itself. With 32-row groups (what EXL2 models mostly use)
// that bookkeeping is as long as the multiplication. Sixteen columns of a
// packed row are also exactly one cache line.
#define QUIRE_AVX512 __attribute__((target("avx512f,avx512bw,avx2,fma"), always_inline)) inline

template <int Bits, int J>
QUIRE_AVX512 __m512i wide_quad_lane(const __m512i* w) {
  constexpr int per_byte = 8 / Bits;
  constexpr int shift = (J % per_byte) * Bits;
  const __m512i mask = _mm512_set1_epi32(int(0x01010101u * kValueMask<Bits>));
  const __m512i word = w[J / per_byte];
  if constexpr (shift == 0) {
    return _mm512_and_si512(word, mask);
  } else {
    return _mm512_and_si512(_mm512_srli_epi32(word, shift), mask);
  }
}

template <int Bits, int R, int J>
QUIRE_AVX512 void wide_add_quads(const __m512i* w, const std::int32_t* const* x, __m512i* sum) {
  if constexpr (J < 8) {
    const __m512i lane = wide_quad_lane<Bits, J>(w);
    for (int r = 0; r < R; ++r)
      sum[r] = _mm512_add_epi16(sum[r], _mm512_maddubs_epi16(lane, _mm512_set1_epi32(x[r][J])));
    wide_add_quads<Bits, R, J + 1>(w, x, sum);
  }
}

// value_low, value_high and pair_lane with 512-bit registers: sixteen
// columns.
template <int Bits, int Bit>
QUIRE_AVX512 __m512i wide_value_low(const __m512i* w) {
  constexpr int word = Bit / 32;
  constexpr int shift = Bit % 32;
  __m512i v = _mm512_srli_epi32(w[word], shift);
  if constexpr (shift + Bits > 32)
    v = _mm512_or_si512(v, _mm512_slli_epi32(w[word + 1], 32 - shift));
  return _mm512_and_si512(v, _mm512_set1_epi32(int(kValueMask<Bits>)));
}

template <int Bits, int Bit>
QUIRE_AVX512 __m512i wide_value_high(const __m512i* w) {
  constexpr int word = Bit / 32;
  constexpr int shift = Bit % 32;
  const __m512i mask = _mm512_set1_epi32(int(kValueMask<Bits> << 16));
  if constexpr (shift + Bits > 32) {
    return _mm512_and_si512(_mm512_slli_epi32(wide_value_low<Bits, Bit>(w), 16), mask);
  } else if constexpr (shift >= 16) {
    return _mm512_and_si512(_mm512_srli_epi32(w[word], shift - 16), mask);
  } else {
    return _mm512_and_si512(_mm512_slli_epi32(w[word], 16 - shift), mask);
  }
}

template <int Bits, int P>
QUIRE_AVX512 __m512i wide_pair_lane(const __m512i* w) {
  constexpr int low = kPairs<Bits>[P].low * Bits;
  constexpr int high = kPairs<Bits>[P].high * Bits;
  if constexpr (high - low == 16 && low / 32 == (high + Bits - 1) / 32) {
    constexpr std::uint32_t mask = kValueMask<Bits> | (kValueMask<Bits> << 16);
    return _mm512_and_si512(_mm512_srli_epi32(w[low / 32], low % 32), _mm512_set1_epi32(int(mask)));
  } else {
    return _mm512_or_si512(wide_value_low<Bits, low>(w), wide_value_high<Bits, high>(w));
  }
}

// part[r][P % parts] += the products of pair P of a block with row r's
// 16-bit input pair: vpmaddwd and an add, or vpdpwssd.
template <int Bits, int R, bool Vnni, int P>
QUIRE_AVX512 void wide_add_pairs(const __m512i* w, const std::int32_t* const* x,
                                 __m512i (*part)[kParts<R>]) {
  if constexpr (P < 16) {
    const __m512i lane = wide_pair_lane<Bits, P>(w);
    for (int r = 0; r < R; ++r) {
      __m512i& sum = part[r][P % kParts<R>];
      if constexpr (Vnni) {
        sum = add_pair_products(sum, lane, x[r][P]);
      } else {
        sum = _mm512_add_epi32(sum, _mm512_madd_epi16(lane, _mm512_set1_epi32(x[r][P])));
      }
    }
    wide_add_pairs<Bits, R, Vnni, P + 1>(w, x, part);
  }
}

// Running 32-bit sums per input row with vpdpbusd: each depends on the one
// before, so one row keeps four chains (and two rows two) to hide the
// instruction's latency. The parts add up exactly.
template <int R>
inline constexpr int kVnniParts = R == 1 ? 4 : (R == 2 ? 2 : 1);

// total[r] += the block's byte products for row r, eight quads, with
// vpdpbusd: the same integers as wide_add_quads and vpmaddwd by ones.
template <int Bits, int R, int J>
QUIRE_AVX512 void vnni_add_quads(const __m512i* w, const std::int32_t* const* x,
                                 __m512i (*part)[kVnniParts<R>]) {
  if constexpr (J < 8) {
    const __m512i lane = wide_quad_lane<Bits, J>(w);
    for (int r = 0; r < R; ++r) {
      __m512i& sum = part[r][J % kVnniParts<R>];
      sum = add_byte_products(sum, lane, x[r][J]);
    }
    vnni_add_quads<Bits, R, J + 1>(w, x, part);
  }
}

// What one group's kernel reads for each of its R input rows, looked up once
// per group rather than once per sixteen columns.
template <int R>
struct WideRows {
  const std::int32_t* inputs[R];     // the group's 8-bit quads or 16-bit pairs
  const std::int32_t* zero_sums[R];  // per 512-row chunk (8-bit inputs: one)
  __m512 input_scale[R];
};

template <int R, bool Int8>
QUIRE_AVX512 WideRows<R> wide_rows(const IntegerCall& call, std::size_t g) {
  const Exl2Group& group = call.weight.groups[g];
  const Exl2IntegerInputs& inputs = call.inputs;
  WideRows<R> rows;
  for (int r = 0; r < R; ++r) {
    const std::int64_t row = call.row(r);
    rows.inputs[r] = Int8 ? inputs.quads.data() + row * inputs.quads_per_row + inputs.quad_base[g]
                          : inputs.pairs.data() + row * inputs.half_features + group.first_row / 2;
    rows.zero_sums[r] = inputs.zero_sums.data() + row * inputs.chunks + inputs.chunk_base[g];
    rows.input_scale[r] =
        _mm512_set1_ps(inputs.scales[std::size_t(row) * call.weight.groups.size() + g]);
  }
  return rows;
}

// sum[r] = sum (q - zero) * x over the whole blocks of the group, as float,
// for the sixteen columns whose packed words start at `words`: int8_sums
// (vpmaddubsw, vpaddw and vpmaddwd by ones, or vpdpbusd) or int16_sums
// (vpmaddwd and vpaddd, or vpdpwssd; 512-row chunks summed in float) with
// 512-bit registers. The same integers and additions, so the same bits.
template <int Bits, int R, bool Vnni, bool Int8>
QUIRE_AVX512 void wide_sums(const std::uint32_t* words, std::int64_t stride, int full,
                            const WideRows<R>& rows, __m512* sum) {
  for (int r = 0; r < R; ++r)
    sum[r] = _mm512_setzero_ps();
  constexpr int kRowsPerInput = Int8 ? 4 : 2;
  // 8-bit inputs sum a whole group in 32 bits; 16-bit ones a chunk.
  const int chunk_rows = Int8 ? full : kChunkRows;
  for (int k0 = 0, chunk = 0; k0 < full; k0 += chunk_rows, ++chunk) {
    constexpr int parts = Int8 ? kVnniParts<R> : kParts<R>;
    __m512i part[R][parts];
    for (int r = 0; r < R; ++r) {
      for (int i = 0; i < parts; ++i)
        part[r][i] = _mm512_setzero_si512();
    }
    const int end = std::min(full, k0 + chunk_rows);
    for (int k = k0; k < end; k += 32) {
      const std::uint32_t* block = words + std::int64_t(k / 32) * Bits * stride;
      __m512i w[Bits];
      // Unrolled, so that w stays in registers rather than on the stack.
#pragma GCC unroll 8
      for (int b = 0; b < Bits; ++b)
        w[b] = _mm512_loadu_si512(block + b * stride);
      const std::int32_t* x[R];
      for (int r = 0; r < R; ++r)
        x[r] = rows.inputs[r] + k / kRowsPerInput;
      if constexpr (!Int8) {
        wide_add_pairs<Bits, R, Vnni, 0>(w, x, part);
      } else if constexpr (Vnni) {
        vnni_add_quads<Bits, R, 0>(w, x, part);
      } else {
        __m512i sums[R];
        for (int r = 0; r < R; ++r)
          sums[r] = _mm512_setzero_si512();
        wide_add_quads<Bits, R, 0>(w, x, sums);
        for (int r = 0; r < R; ++r)
          part[r][0] =
              _mm512_add_epi32(part[r][0], _mm512_madd_epi16(sums[r], _mm512_set1_epi16(1)));
      }
    }
    for (int r = 0; r < R; ++r) {
      __m512i total = part[r][0];
      for (int i = 1; i < parts; ++i)
        total = _mm512_add_epi32(total, part[r][i]);
      total = _mm512_sub_epi32(total, _mm512_set1_epi32(rows.zero_sums[r][chunk]));
      sum[r] = _mm512_add_ps(sum[r], _mm512_cvtepi32_ps(total));
    }
  }
}

// add_group<Bits, R, Int8> for the columns [0, wide_width), wide_width a
// multiple of 16. Everything that depends only on the group is read once.
// store: the outputs hold nothing yet; they are written as if added to
// zeros (the fused multiply-add with +0 gives add_group's bits). Tail: the
// group ends in a block shorter than 32 rows, multiplied in float; a
// separate instance, so that the common one keeps its sums in registers.
template <int Bits, int R, bool Vnni, bool Int8, bool Tail>
QUIRE_AVX512 void wide_group_columns(const IntegerCall& call, std::size_t g, int wide_width,
                                     int width, bool store, float* result) {
  const Exl2Group& group = call.weight.groups[g];
  const std::int64_t stride = call.columns;
  const int full = full_rows(group);
  const std::uint32_t* const words = call.weight.q_weight + group.q_row * stride;
  const WideRows<R> rows = wide_rows<R, Int8>(call, g);
  alignas(64) float table[16];
  exl2_scale_table(call.weight.q_scale_max[g], table);
  const __m512 scale_table = _mm512_load_ps(table);
  const std::uint32_t* codes = call.weight.q_scale + std::int64_t(g) * (stride / 8);
  const __m512i nibble_shifts =
      _mm512_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28, 0, 4, 8, 12, 16, 20, 24, 28);
  const __m512i code_word = _mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1);
  const NextGroupPrefetch prefetch(call, g);
  for (int c = 0; c < wide_width; c += 16) {
    prefetch.fetch(c);
    __m512 sum[R];
    wide_sums<Bits, R, Vnni, Int8>(words + c, stride, full, rows, sum);
    // Sixteen 4-bit codes in two words: lanes 0-7 take the first.
    const __m512i packed = _mm512_permutexvar_epi32(
        code_word,
        _mm512_castsi128_si512(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(codes + c / 8))));
    const __m512i code =
        _mm512_and_si512(_mm512_srlv_epi32(packed, nibble_shifts), _mm512_set1_epi32(15));
    const __m512 scale = _mm512_permutexvar_ps(code, scale_table);
    for (int r = 0; r < R; ++r) {
      __m512 value = _mm512_mul_ps(rows.input_scale[r], sum[r]);
      if constexpr (Tail) {
        alignas(64) float tail[16];
        short_block_sums<Bits, 16>(call, group, r, c, tail);
        value = _mm512_add_ps(value, _mm512_load_ps(tail));
      }
      float* out = result + r * width + c;
      const __m512 before = store ? _mm512_setzero_ps() : _mm512_loadu_ps(out);
      _mm512_storeu_ps(out, _mm512_fmadd_ps(scale, value, before));
    }
  }
}

template <int Bits, int R, bool Vnni, bool Int8>
QUIRE_AVX512 void wide_add_group(const IntegerCall& call, std::size_t g, int wide_width, int width,
                                 bool store, float* result) {
  const Exl2Group& group = call.weight.groups[g];
  if (full_rows(group) < group.rows) {
    wide_group_columns<Bits, R, Vnni, Int8, true>(call, g, wide_width, width, store, result);
  } else {
    wide_group_columns<Bits, R, Vnni, Int8, false>(call, g, wide_width, width, store, result);
  }
}

template <int R, bool Vnni>
QUIRE_AVX512 void wide_multiply_groups(const IntegerCall& call, std::size_t first, std::size_t last,
                                       int width, float* out) {
  const int wide_width = width / 16 * 16;
  // The first group stores its sums (wide_add_group) rather than adding
  // them to zeros: zeroing all R rows of the width (20 KiB a row for the 96M
  // shape's MLP) took a sixth of a four-row product.
  for (int r = 0; r < R; ++r)
    std::fill(out + r * width + wide_width, out + (r + 1) * width, 0.0f);
  for (std::size_t g = first; g < last; ++g) {
    const Exl2Group& group = call.weight.groups[g];
    const bool int8 = call.inputs.takes_int8(group);
    const bool store = g == first;
    switch (group.bits) {
      case 2:
        if (int8) {
          wide_add_group<2, R, Vnni, true>(call, g, wide_width, width, store, out);
        } else {
          wide_add_group<2, R, Vnni, false>(call, g, wide_width, width, store, out);
        }
        break;
      case 3:
        wide_add_group<3, R, Vnni, false>(call, g, wide_width, width, store, out);
        break;
      case 4:
        if (int8) {
          wide_add_group<4, R, Vnni, true>(call, g, wide_width, width, store, out);
        } else {
          wide_add_group<4, R, Vnni, false>(call, g, wide_width, width, store, out);
        }
        break;
      case 5:
        wide_add_group<5, R, Vnni, false>(call, g, wide_width, width, store, out);
        break;
      case 6:
        wide_add_group<6, R, Vnni, false>(call, g, wide_width, width, store, out);
        break;
      default:
        wide_add_group<8, R, Vnni, false>(call, g, wide_width, width, store, out);
        break;
    }
    if (wide_width < width) add_any_group<R>(call, g, wide_width, width, out);
  }
}

template <int R>
__attribute__((target("avx512f,avx512bw,avx2,fma"))) void wide_multiply_slice(
    const IntegerCall& call, std::size_t first, std::size_t last, int width, float* out) {
  wide_multiply_groups<R, false>(call, first, last, width, out);
}

template <int R>
__attribute__((target("avx512f,avx512bw,avx512vnni,avx2,fma"))) void vnni_multiply_slice(
    const IntegerCall& call, std::size_t first, std::size_t last, int width, float* out) {
  wide_multiply_groups<R, true>(call, first, last, width, out);
}

template <int R>
void run_slice(const IntegerCall& call, std::size_t first, std::size_t last, int width, bool wide,
               float* out) {
  static const bool vnni = wide_vnni_allowed();
  if (wide && vnni) {
    vnni_multiply_slice<R>(call, first, last, width, out);
  } else if (wide) {
    wide_multiply_slice<R>(call, first, last, width, out);
  } else {
    multiply_slice<R>(call, first, last, width, out);
  }
}

}  // namespace

bool exl2_integer_wide_supported() {
  return exl2_integer_supported() && wide_vectors_allowed();
}

void exl2_integer_slice(const Exl2Weight& weight, std::int64_t columns, std::int64_t in_features,
                        const float* xp, const Exl2IntegerInputs& inputs, int rows,
                        std::size_t first_group, std::size_t last_group, int width, bool wide,
                        float* out) {
  if (wide && !wide_vectors_allowed())
    throw std::logic_error("the wide EXL2 product needs AVX-512BW");
  // Four rows at a time: the kernels keep a register of sums per row, and
  // more rows than four would not fit in the sixteen AVX2 registers.
  for (int first = 0; first < rows; first += 4) {
    const IntegerCall call{weight, columns, in_features, xp, inputs, first};
    float* rows_out = out + std::int64_t(first) * width;
    switch (std::min(4, rows - first)) {
      case 1:
        run_slice<1>(call, first_group, last_group, width, wide, rows_out);
        break;
      case 2:
        run_slice<2>(call, first_group, last_group, width, wide, rows_out);
        break;
      case 3:
        run_slice<3>(call, first_group, last_group, width, wide, rows_out);
        break;
      default:
        run_slice<4>(call, first_group, last_group, width, wide, rows_out);
        break;
    }
  }
}

#else

bool exl2_integer_wide_supported() {
  return false;
}

void exl2_integer_slice(const Exl2Weight&, std::int64_t, std::int64_t, const float*,
                        const Exl2IntegerInputs&, int, std::size_t, std::size_t, int, bool,
                        float*) {
  throw std::logic_error("the integer EXL2 product needs AVX2");
}

#endif

}  // namespace quire::kernels::linear_detail
