// EXL2 products of one to four input rows: decode steps of one or a few jobs,
// which read every weight once per step and do little arithmetic with each.
// Each value is unpacked once and multiplied into every row.
//
// The work is cut along the input rows: a work item is a slice of whole
// groups, whose q_weight rows are one contiguous run of memory, and it walks
// them in storage order for every output column, so the hardware prefetcher
// streams the weights. (The tiles of the batched product instead go down the
// rows 32 columns at a time and jump a whole row, several KiB, between cache
// lines: fine when a decoded tile serves 32 input rows, slow when it serves
// one; cutting along the columns left short runs per row that the prefetcher
// barely started on.) Each slice sums into its own outputs and the slices are
// added in order at the end. Eight columns are unpacked at a time in vector
// registers with shifts fixed at compile time, and the zero point leaves the
// inner loop: sum x * (q - z) = sum x * q - z * sum x.

#include <algorithm>
#include <array>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "linear_internal.h"
#include "packed_values.h"
#include "quire/kernels/cpu/exl2_scale.h"
#include "quire/kernels/cpu/simd.h"

// The helpers below pass 32-byte vectors by value; they are inlined into one
// function per clone and never cross an ABI boundary.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace quire::kernels::linear_detail {
namespace {

// GCC vector types: eight lanes, lowered to the widest registers of the clone
// being compiled (two SSE registers for the baseline, one AVX2 register for
// x86-64-v3).
using Floats = float __attribute__((vector_size(32)));
using Words = std::uint32_t __attribute__((vector_size(32)));
using Ints = std::int32_t __attribute__((vector_size(32)));
constexpr int kLanes = 8;

QUIRE_LINEAR_INLINE Words load_words(const std::uint32_t* p) {
  Words w;
  std::memcpy(&w, p, sizeof w);
  return w;
}

QUIRE_LINEAR_INLINE Floats load_floats(const float* p) {
  Floats f;
  std::memcpy(&f, p, sizeof f);
  return f;
}

QUIRE_LINEAR_INLINE void store_floats(float* p, Floats f) {
  std::memcpy(p, &f, sizeof f);
}

// Value J of a 32-row block for eight columns, from the block's word rows w.
template <int Bits, int J>
QUIRE_LINEAR_INLINE Floats block_value(const Words* w) {
  constexpr int bit = J * Bits;
  constexpr int word = bit / 32;
  constexpr int shift = bit % 32;
  Words v = w[word] >> shift;
  if constexpr (shift + Bits > 32) v |= w[word + 1] << (32 - shift);
  return __builtin_convertvector(__builtin_convertvector(v & kValueMask<Bits>, Ints), Floats);
}

// Running sums per input row of one call; eight in all keep the fused
// multiply-adds of consecutive values from waiting on each other (four left
// the single-row loop bound by their latency).
template <int R>
inline constexpr int kParts = R == 1 ? 8 : (R == 2 ? 4 : 2);

// part[r][J % kParts] += x[r][J] * q_J for values J.. of a block and R input
// rows: unrolled at compile time, so every shift is a constant, and each value
// is unpacked once for all rows.
template <int Bits, int R, int J>
QUIRE_LINEAR_INLINE void add_values(const Words* w, const float* const* x,
                                    Floats (*part)[kParts<R>]) {
  if constexpr (J < 32) {
    const Floats q = block_value<Bits, J>(w);
    for (int r = 0; r < R; ++r)
      part[r][J % kParts<R>] += x[r][J] * q;
    add_values<Bits, R, J + 1>(w, x, part);
  }
}

template <int Bits, int B>
QUIRE_LINEAR_INLINE void load_block(const std::uint32_t* block, std::int64_t stride, Words* w) {
  if constexpr (B < Bits) {
    w[B] = load_words(block + B * stride);
    load_block<Bits, B + 1>(block, stride, w);
  }
}

template <int Parts>
QUIRE_LINEAR_INLINE Floats sum_parts(const Floats* part) {
  if constexpr (Parts == 8) {
    return ((part[0] + part[1]) + (part[2] + part[3])) +
           ((part[4] + part[5]) + (part[6] + part[7]));
  } else if constexpr (Parts == 4) {
    return (part[0] + part[1]) + (part[2] + part[3]);
  } else {
    return part[0] + part[1];
  }
}

// sum[r] = sum_j x[r][j] * q_j over the rows of one group, for eight columns.
template <int Bits, int R>
QUIRE_LINEAR_INLINE void group_sums(const std::uint32_t* words, std::int64_t stride,
                                    const float* const* x, int rows, Floats* sum) {
  Floats part[R][kParts<R>] = {};
  int k0 = 0;
  for (; k0 + 32 <= rows; k0 += 32) {
    Words w[Bits];
    load_block<Bits, 0>(words + std::int64_t(k0 / 32) * Bits * stride, stride, w);
    const float* xk[R];
    for (int r = 0; r < R; ++r)
      xk[r] = x[r] + k0;
    add_values<Bits, R, 0>(w, xk, part);
  }
  for (int r = 0; r < R; ++r)
    sum[r] = sum_parts<kParts<R>>(part[r]);
  if (k0 < rows) {
    // A short last block (a group of fewer than 32 rows): shifts chosen at
    // run time.
    for (int r = 0; r < R; ++r) {
      alignas(32) float tail[kLanes] = {};
      accumulate_block<Bits, kLanes>(words + std::int64_t(k0 / 32) * Bits * stride, stride,
                                     x[r] + k0, rows - k0, 0, tail);
      sum[r] += load_floats(tail);
    }
  }
}

struct RowCall {
  const Product& product;
  const Exl2Weight& weight;
  std::int64_t columns;  // q_weight row length
  const float* xp;       // the inputs in quantized order, [rows, K]
};

// The sum of a group's inputs, in a fixed order.
QUIRE_LINEAR_INLINE float input_sum(const float* x, int rows) {
  Floats lanes = {};
  int k = 0;
  for (; k + kLanes <= rows; k += kLanes)
    lanes += load_floats(x + k);
  float sum = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) +
              ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
  for (; k < rows; ++k)
    sum += x[k];
  return sum;
}

// result[r][c] += scale[c] * (sum x * q - zero * sum x) for one group, R
// input rows and the columns below width (result rows `width` apart).
template <int Bits, int R>
QUIRE_LINEAR_INLINE void add_group(const RowCall& call, std::size_t g, int width, float* result) {
  const Exl2Group& group = call.weight.groups[g];
  const std::int64_t stride = call.columns;
  const std::uint32_t* words = call.weight.q_weight + group.q_row * stride;
  const float* x[R];
  Floats zero_sum[R];
  for (int r = 0; r < R; ++r) {
    x[r] = call.xp + r * call.product.in_features + group.first_row;
    zero_sum[r] = Floats{} + static_cast<float>(1 << (Bits - 1)) * input_sum(x[r], group.rows);
  }
  // The 16 scales of the group's codes; a shuffle of the two halves looks up
  // eight columns' scales at once.
  alignas(32) float table[16];
  exl2_scale_table(call.weight.q_scale_max[g], table);
#if !defined(__clang__)
  const Floats low = load_floats(table);
  const Floats high = load_floats(table + 8);
#endif
  const std::uint32_t* codes = call.weight.q_scale + std::int64_t(g) * (stride / 8);
  const Words nibble_shifts = {0, 4, 8, 12, 16, 20, 24, 28};
  for (int c = 0; c < width; c += kLanes) {
    Floats sum[R];
    group_sums<Bits, R>(words + c, stride, x, group.rows, sum);
    const Words code = (codes[c / 8] >> nibble_shifts) & 15u;
#if defined(__clang__)
    // Clang has no two-vector shuffle with a variable selector.
    Floats scale;
    for (int i = 0; i < 8; ++i)
      scale[i] = table[code[i]];
#else
    const Floats scale = __builtin_shuffle(low, high, __builtin_convertvector(code, Ints));
#endif
    for (int r = 0; r < R; ++r) {
      float* out = result + r * width + c;
      store_floats(out, load_floats(out) + scale * (sum[r] - zero_sum[r]));
    }
  }
}

// out[r][c] = the sums of the groups [first, last) for R input rows and every
// column c < width.
template <int R>
QUIRE_LINEAR_CLONES void multiply_slice(const RowCall& call, std::size_t first, std::size_t last,
                                        int width, float* out) {
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

// partial[0][c] += partial[s][c] for s = 1.. in order (width a multiple of 8).
QUIRE_LINEAR_CLONES void sum_slices(float* partial, std::size_t slices, int width) {
  for (int c = 0; c < width; c += kLanes) {
    Floats sum = load_floats(partial + c);
    for (std::size_t s = 1; s < slices; ++s)
      sum += load_floats(partial + s * std::size_t(width) + c);
    store_floats(partial + c, sum);
  }
}

// Groups in slices of about this many input rows. The slices depend on the
// weight's shape only, so the sums, and the outputs, do not depend on how
// many threads compute them.
constexpr int kSliceRows = 128;

std::vector<std::size_t> slice_starts(const Exl2Weight& weight) {
  std::vector<std::size_t> starts;
  int rows = kSliceRows;
  for (std::size_t g = 0; g < weight.groups.size(); ++g) {
    if (rows >= kSliceRows) {
      starts.push_back(g);
      rows = 0;
    }
    rows += weight.groups[g].rows;
  }
  starts.push_back(weight.groups.size());
  return starts;
}

}  // namespace

Exl2FewRows::Exl2FewRows(const Product& product, const Exl2Weight& weight, std::int64_t columns,
                         float* xp, Exl2RowPath path)
    : product_(product),
      weight_(weight),
      columns_(columns),
      xp_(xp),
      path_(path),
      rows_(static_cast<int>(product.rows)),
      // Only columns below N are computed, in whole vectors (the converter's
      // padding columns hold zeros and have no output).
      width_(static_cast<int>((product.out_features + kLanes - 1) / kLanes * kLanes)),
      starts_(slice_starts(weight)) {
  if (path_ == Exl2RowPath::fastest) {
    if (!exl2_integer_supported()) {
      path_ = Exl2RowPath::float_inputs;
    } else if (product.kind == ProductRows::decode) {
      path_ = Exl2RowPath::int8_inputs;
    } else {
      path_ = wide_vnni_allowed() ? Exl2RowPath::int16_inputs : Exl2RowPath::float_inputs;
    }
  }
  if (path_ != Exl2RowPath::float_inputs) {
    if (!exl2_integer_supported()) throw std::logic_error("the integer EXL2 product needs AVX2");
    exl2_integer_layout(weight, rows_, product.in_features,
                        path_ == Exl2RowPath::int8_inputs || path_ == Exl2RowPath::int8_inputs_256,
                        buffers_->inputs);
  }
  // Each slice fills its own part first.
  grow_to(buffers_->partial, slices() * slice_size());
}

void Exl2FewRows::gather_inputs(std::size_t first_group, std::size_t last_group) {
  if (first_group == last_group) return;
  const Exl2Group& last = weight_.groups[last_group - 1];
  const std::int64_t begin = weight_.groups[first_group].first_row;
  const std::int64_t end = last.first_row + last.rows;
  const std::int64_t in = product_.in_features;
  for (int r = 0; r < rows_; ++r) {
    const float* source = product_.x + r * in;
    float* target = xp_ + r * in;
    for (std::int64_t k = begin; k < end; ++k)
      target[k] = source[weight_.perm[k]];
  }
}

void Exl2FewRows::run_slice(std::size_t s) {
  const std::size_t g0 = starts_[s];
  const std::size_t g1 = starts_[s + 1];
  gather_inputs(g0, g1);
  float* out = buffers_->partial.data() + s * slice_size();
  if (path_ != Exl2RowPath::float_inputs) {
    exl2_integer_quantize(weight_, xp_, rows_, product_.in_features, g0, g1, buffers_->inputs);
    const bool wide = path_ != Exl2RowPath::int8_inputs_256 && exl2_integer_wide_supported();
    exl2_integer_slice(weight_, columns_, product_.in_features, xp_, buffers_->inputs, rows_, g0,
                       g1, width_, wide, out);
    return;
  }
  // Four rows at a time, as the integer kernel takes them.
  for (int first = 0; first < rows_; first += 4) {
    const RowCall call{product_, weight_, columns_, xp_ + first * product_.in_features};
    float* rows_out = out + std::int64_t(first) * width_;
    switch (std::min(4, rows_ - first)) {
      case 1:
        multiply_slice<1>(call, g0, g1, width_, rows_out);
        break;
      case 2:
        multiply_slice<2>(call, g0, g1, width_, rows_out);
        break;
      case 3:
        multiply_slice<3>(call, g0, g1, width_, rows_out);
        break;
      default:
        multiply_slice<4>(call, g0, g1, width_, rows_out);
        break;
    }
  }
}

void Exl2FewRows::finish() {
  float* partial = buffers_->partial.data();
  sum_slices(partial, slices(), static_cast<int>(slice_size()));
  for (int r = 0; r < rows_; ++r)
    store_outputs(product_, r, 0, width_, partial + std::size_t(r) * std::size_t(width_));
}

void exl2_few_rows_product(ThreadPool& pool, const Product& product, const Exl2Weight& weight,
                           std::int64_t columns, float* xp, Exl2RowPath path) {
  Exl2FewRows work(product, weight, columns, xp, path);
  pool.parallel_for(static_cast<std::int64_t>(work.slices()), 1,
                    [&](std::int64_t first, std::int64_t last) {
                      for (std::int64_t s = first; s < last; ++s)
                        work.run_slice(std::size_t(s));
                    });
  work.finish();
}

}  // namespace quire::kernels::linear_detail
