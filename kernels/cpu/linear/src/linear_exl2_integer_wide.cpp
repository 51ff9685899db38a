// EXL2 products of a few input rows in integer arithmetic with 512-bit
// registers: exl2_integer::wide_groups (exl2_integer_kernel.h).

#include <algorithm>
#include <stdexcept>

#include "exl2_integer_kernel.h"
#include "quire/kernels/cpu/exl2_scale.h"
#include "quire/kernels/cpu/pair_products.h"
#include "wide_packed_values.h"

#ifdef QUIRE_HAVE_EXL2_INTEGER_PATH

namespace quire::kernels::linear_detail::exl2_integer {
namespace {

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

// pair_lane with 512-bit registers: sixteen columns.
template <int Bits, int P>
QUIRE_AVX512 __m512i wide_pair_lane(const __m512i* w) {
  constexpr int low = kPairs<Bits>[P].low * Bits;
  constexpr int high = kPairs<Bits>[P].high * Bits;
  if constexpr (high - low == 16 && low / 32 == (high + Bits - 1) / 32) {
    constexpr std::uint32_t mask = kValueMask<Bits> | (kValueMask<Bits> << 16);
    return _mm512_and_si512(_mm512_srli_epi32(w[low / 32], low % 32), _mm512_set1_epi32(int(mask)));
  } else {
    return _mm512_or_si512(wide_values::value_low<Bits, low>(w),
                           wide_values::value_high<Bits, high>(w));
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

// sum[r] = sum (q - zero) * x over the whole blocks of the group, as float,
// for the sixteen columns whose packed words start at `words`: int8_sums
// (vpmaddubsw, vpaddw and vpmaddwd by ones, or vpdpbusd) or int16_sums
// (vpmaddwd and vpaddd, or vpdpwssd; 512-row chunks summed in float) with
// 512-bit registers. The same integers and additions, so the same bits.
template <int Bits, int R, bool Vnni, bool Int8>
QUIRE_AVX512 void wide_sums(const std::uint32_t* words, std::int64_t stride, int full,
                            const GroupRows<R>& rows, __m512* sum) {
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
  const GroupRows<R> rows = group_rows<R, Int8>(call, g);
  __m512 input_scale[R];
  for (int r = 0; r < R; ++r)
    input_scale[r] = _mm512_set1_ps(rows.input_scale[r]);
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
      __m512 value = _mm512_mul_ps(input_scale[r], sum[r]);
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
    if (wide_width < width) narrow_columns(call, R, g, wide_width, width, out);
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
void run_groups(const IntegerCall& call, std::size_t first, std::size_t last, int width, bool vnni,
                float* out) {
  if (vnni) {
    vnni_multiply_slice<R>(call, first, last, width, out);
  } else {
    wide_multiply_slice<R>(call, first, last, width, out);
  }
}

}  // namespace

void wide_groups(const IntegerCall& call, int rows, std::size_t first, std::size_t last, int width,
                 bool vnni, float* out) {
  switch (rows) {
    case 1:
      run_groups<1>(call, first, last, width, vnni, out);
      break;
    case 2:
      run_groups<2>(call, first, last, width, vnni, out);
      break;
    case 3:
      run_groups<3>(call, first, last, width, vnni, out);
      break;
    case 4:
      run_groups<4>(call, first, last, width, vnni, out);
      break;
    default:
      throw std::logic_error("the wide EXL2 kernel takes one to four rows at a time");
  }
}

}  // namespace quire::kernels::linear_detail::exl2_integer

#endif
