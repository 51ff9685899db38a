#pragma once

// What the two EXL2 integer decode kernels share: the 256-bit one
// (linear_exl2_integer.cpp, AVX2) and the 512-bit one
// (linear_exl2_integer_wide.cpp, AVX-512BW and VNNI), which hands the last
// eight columns of a width not a multiple of 16 to the first.

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "exl2_integer_layout.h"
#include "linear_internal.h"
#include "packed_values.h"

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

#ifdef QUIRE_HAVE_EXL2_INTEGER_PATH

#define QUIRE_AVX2 __attribute__((target("avx2,fma"), always_inline)) inline

namespace quire::kernels::linear_detail::exl2_integer {

// Running sums per input row: with one row, four keep the additions of
// consecutive pairs from waiting on each other.
template <int R>
inline constexpr int kParts = R == 1 ? 4 : (R == 2 ? 2 : 1);

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

// What a group's kernel reads for each of its R input rows, looked up once
// per group rather than once per block of columns.
template <int R>
struct GroupRows {
  const std::int32_t* inputs[R];     // the group's 8-bit quads or 16-bit pairs
  const std::int32_t* zero_sums[R];  // per 512-row chunk (8-bit inputs: one)
  float input_scale[R];
};

template <int R, bool Int8>
QUIRE_AVX2 GroupRows<R> group_rows(const IntegerCall& call, std::size_t g) {
  const Exl2Group& group = call.weight.groups[g];
  const Exl2IntegerInputs& inputs = call.inputs;
  GroupRows<R> rows;
  for (int r = 0; r < R; ++r) {
    const std::int64_t row = call.row(r);
    rows.inputs[r] = Int8 ? inputs.quads.data() + row * inputs.quads_per_row + inputs.quad_base[g]
                          : inputs.pairs.data() + row * inputs.half_features + group.first_row / 2;
    rows.zero_sums[r] = inputs.zero_sums.data() + row * inputs.chunks + inputs.chunk_base[g];
    rows.input_scale[r] = inputs.scales[std::size_t(row) * call.weight.groups.size() + g];
  }
  return rows;
}

// out[r][c] += the group's products for the `rows` (1 to 4) input rows of
// `call` and the columns [first_column, width), with 256-bit registers.
void narrow_columns(const IntegerCall& call, int rows, std::size_t g, int first_column, int width,
                    float* out);

// out[r][c] = the sums of the groups [first, last) for the `rows` (1 to 4)
// input rows of `call` and every column c < width, with 512-bit registers
// (needs exl2_integer_wide_supported()); vnni: with vpdpbusd and vpdpwssd
// (needs wide_vnni_allowed()).
void wide_groups(const IntegerCall& call, int rows, std::size_t first, std::size_t last, int width,
                 bool vnni, float* out);

}  // namespace quire::kernels::linear_detail::exl2_integer

#endif
