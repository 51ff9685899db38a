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

#include "exl2_integer_kernel.h"
#include "narrow_packed_values.h"
#include "quire/kernels/cpu/exl2_scale.h"

namespace quire::kernels::linear_detail {

#ifdef QUIRE_HAVE_EXL2_INTEGER_PATH

namespace exl2_integer {
namespace {

using narrow_values::pair_lane;

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

// sum[r] = sum (q - zero) * x over the whole blocks of the group, as float,
// for the eight columns whose packed words start at `words`. 16-bit inputs:
// vpmaddwd and vpaddd, in chunks of 512 rows summed in float. 8-bit inputs
// (2- and 4-bit groups): vpmaddubsw and vpaddw per 32-row block, then
// vpmaddwd by ones; whole groups sum in 32 bits without overflow, so there
// are no chunks.
template <int Bits, int R, bool Int8>
QUIRE_AVX2 void narrow_sums(const std::uint32_t* words, std::int64_t stride, int full,
                            const GroupRows<R>& rows, __m256* sum) {
  for (int r = 0; r < R; ++r)
    sum[r] = _mm256_setzero_ps();
  constexpr int kRowsPerInput = Int8 ? 4 : 2;
  const int chunk_rows = Int8 ? full : kChunkRows;
  for (int k0 = 0, chunk = 0; k0 < full; k0 += chunk_rows, ++chunk) {
    __m256i part[R][kParts<R>];
    for (int r = 0; r < R; ++r) {
      for (int i = 0; i < kParts<R>; ++i)
        part[r][i] = _mm256_setzero_si256();
    }
    const int end = std::min(full, k0 + chunk_rows);
    for (int k = k0; k < end; k += 32) {
      __m256i w[Bits];
      load_block<Bits, 0>(words + std::int64_t(k / 32) * Bits * stride, stride, w);
      const std::int32_t* x[R];
      for (int r = 0; r < R; ++r)
        x[r] = rows.inputs[r] + k / kRowsPerInput;
      if constexpr (Int8) {
        __m256i block[R];
        for (int r = 0; r < R; ++r)
          block[r] = _mm256_setzero_si256();
        add_quads<Bits, R, 0>(w, x, block);
        for (int r = 0; r < R; ++r) {
          part[r][0] =
              _mm256_add_epi32(part[r][0], _mm256_madd_epi16(block[r], _mm256_set1_epi16(1)));
        }
      } else {
        add_pairs<Bits, R, 0>(w, x, part);
      }
    }
    for (int r = 0; r < R; ++r) {
      __m256i total = part[r][0];
      for (int i = 1; i < kParts<R>; ++i)
        total = _mm256_add_epi32(total, part[r][i]);
      total = _mm256_sub_epi32(total, _mm256_set1_epi32(rows.zero_sums[r][chunk]));
      sum[r] = _mm256_add_ps(sum[r], _mm256_cvtepi32_ps(total));
    }
  }
}

// result[r][c] += scale[c] * sum (q - zero) * x for one group, R input rows and
// the columns [first_column, width). Tail: the group ends in a block shorter
// than 32 rows, multiplied in float; a separate instance, so that the common
// one keeps its sums in registers.
template <int Bits, int R, bool Int8, bool Tail>
QUIRE_AVX2 void group_columns(const IntegerCall& call, std::size_t g, int first_column, int width,
                              float* result) {
  const Exl2Group& group = call.weight.groups[g];
  const std::int64_t stride = call.columns;
  const int full = full_rows(group);
  const std::uint32_t* const words = call.weight.q_weight + group.q_row * stride;
  const GroupRows<R> rows = group_rows<R, Int8>(call, g);
  __m256 input_scale[R];
  for (int r = 0; r < R; ++r)
    input_scale[r] = _mm256_set1_ps(rows.input_scale[r]);
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
    narrow_sums<Bits, R, Int8>(words + c, stride, full, rows, sum);
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
      if constexpr (Tail) {
        alignas(32) float tail[8];
        short_block_sums<Bits, 8>(call, group, r, c, tail);
        value = _mm256_add_ps(value, _mm256_load_ps(tail));
      }
      float* out = result + r * width + c;
      _mm256_storeu_ps(out, _mm256_fmadd_ps(scale, value, _mm256_loadu_ps(out)));
    }
  }
}

template <int Bits, int R, bool Int8>
QUIRE_AVX2 void add_group(const IntegerCall& call, std::size_t g, int first_column, int width,
                          float* result) {
  const Exl2Group& group = call.weight.groups[g];
  if (full_rows(group) < group.rows) {
    group_columns<Bits, R, Int8, true>(call, g, first_column, width, result);
  } else {
    group_columns<Bits, R, Int8, false>(call, g, first_column, width, result);
  }
}

// Every group of the 256-bit kernel, and the last eight columns the 512-bit
// one leaves.
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

template <int R>
__attribute__((target("avx2,fma"))) void columns_of_group(const IntegerCall& call, std::size_t g,
                                                          int first_column, int width, float* out) {
  add_any_group<R>(call, g, first_column, width, out);
}

}  // namespace

void narrow_columns(const IntegerCall& call, int rows, std::size_t g, int first_column, int width,
                    float* out) {
  switch (rows) {
    case 1:
      columns_of_group<1>(call, g, first_column, width, out);
      break;
    case 2:
      columns_of_group<2>(call, g, first_column, width, out);
      break;
    case 3:
      columns_of_group<3>(call, g, first_column, width, out);
      break;
    default:
      columns_of_group<4>(call, g, first_column, width, out);
      break;
  }
}

}  // namespace exl2_integer

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
  using namespace exl2_integer;
  static const bool vnni = wide_vnni_allowed();
  for (int first = 0; first < rows; first += 4) {
    const IntegerCall call{weight, columns, in_features, xp, inputs, first};
    float* rows_out = out + std::int64_t(first) * width;
    const int count = std::min(4, rows - first);
    if (wide) {
      wide_groups(call, count, first_group, last_group, width, vnni, rows_out);
      continue;
    }
    switch (count) {
      case 1:
        multiply_slice<1>(call, first_group, last_group, width, rows_out);
        break;
      case 2:
        multiply_slice<2>(call, first_group, last_group, width, rows_out);
        break;
      case 3:
        multiply_slice<3>(call, first_group, last_group, width, rows_out);
        break;
      default:
        multiply_slice<4>(call, first_group, last_group, width, rows_out);
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
