// GPTQ products. Input row k belongs to group g_idx[k] (k / group_size
// without act-order), whose zero point and scale apply per output column.

#include <algorithm>
#include <vector>

#include "linear_internal.h"
#include "packed_values.h"
#include "quire/kernels/cpu/half.h"

namespace quire::kernels::linear_detail {
namespace {

struct GptqCall {
  const Product& product;
  const GptqWeight& weight;
  std::vector<std::int32_t> group_of;  // [K]
  std::vector<float> group_sums;       // [rows, G]: sum of the inputs of each group
};

struct Scratch {
  std::vector<float> acc;
  std::vector<float> zeros;
  std::vector<float> scales;
};

QUIRE_LINEAR_INLINE float zero_point(const GptqWeight& weight, std::int64_t columns, std::int64_t g,
                                     std::int64_t n) {
  const std::uint32_t word = weight.qzeros[g * (columns / 8) + n / 8];
  // GPTQ v1 checkpoints store the zero point minus one.
  return static_cast<float>(((word >> (4 * (n % 8))) & 15u) + (weight.exact_zeros ? 0u : 1u));
}

// One input row. With q the raw 4-bit values, sum_k x[k] (q - z[g]) s[g]
// = sum_g s[g] (sum_{k in g} x[k] q - z[g] sum_{k in g} x[k]): the loop over
// the weights only adds x * q into the accumulator row of the input's group.
template <int T>
QUIRE_LINEAR_INLINE void multiply_row(const GptqCall& call, std::int64_t row, std::int64_t begin,
                                      Scratch& scratch) {
  const GptqWeight& weight = call.weight;
  const std::int64_t in = call.product.in_features;
  const std::int64_t columns = call.product.out_features;
  const std::int64_t groups = weight.groups;
  scratch.acc.assign(std::size_t(groups * T), 0.0f);
  float* acc = scratch.acc.data();
  const float* x = call.product.x + row * in;
  for (std::int64_t kw = 0; kw < in / 8; ++kw) {
    const std::uint32_t* words = weight.qweight + kw * columns + begin;
    for (int v = 0; v < 8; ++v) {
      const std::int64_t k = kw * 8 + v;
      accumulate_values<4, false, T>(words, words, 4 * v, 0, x[k],
                                     acc + std::int64_t(call.group_of[std::size_t(k)]) * T);
    }
  }
  float result[T] = {};
  const float* sums = call.group_sums.data() + row * groups;
  for (std::int64_t g = 0; g < groups; ++g) {
    for (int i = 0; i < T; ++i) {
      const std::int64_t n = begin + i;
      const float scale = half_to_float(weight.scales[g * columns + n]);
      result[i] += scale * (acc[g * T + i] - zero_point(weight, columns, g, n) * sums[g]);
    }
  }
  store_outputs(call.product, row, begin, T, result);
}

template <int T>
QUIRE_LINEAR_INLINE void dequantize_values(const std::uint32_t* __restrict words, int shift,
                                           const float* __restrict zero,
                                           const float* __restrict scale, float* __restrict out) {
  for (int i = 0; i < T; ++i) {
    const auto value = static_cast<std::int32_t>((words[i] >> shift) & 15u);
    out[i] = (static_cast<float>(value) - zero[i]) * scale[i];
  }
}

// Several input rows: every 32 input rows are dequantized once into `tile`
// (each row with its own group's zero points and scales) and applied to all.
template <int T>
QUIRE_LINEAR_INLINE void multiply_rows(const GptqCall& call, std::int64_t row_begin,
                                       std::int64_t row_end, std::int64_t begin, Scratch& scratch) {
  const GptqWeight& weight = call.weight;
  const std::int64_t in = call.product.in_features;
  const std::int64_t columns = call.product.out_features;
  const std::int64_t rows = row_end - row_begin;
  scratch.zeros.resize(std::size_t(weight.groups * T));
  scratch.scales.resize(std::size_t(weight.groups * T));
  for (std::int64_t g = 0; g < weight.groups; ++g) {
    for (int i = 0; i < T; ++i) {
      scratch.zeros[std::size_t(g * T + i)] = zero_point(weight, columns, g, begin + i);
      scratch.scales[std::size_t(g * T + i)] =
          half_to_float(weight.scales[g * columns + begin + i]);
    }
  }
  scratch.acc.assign(std::size_t(rows * T), 0.0f);
  float tile[32 * T];
  for (std::int64_t k0 = 0; k0 < in; k0 += 32) {
    const int count = static_cast<int>(std::min<std::int64_t>(32, in - k0));
    for (int j = 0; j < count; ++j) {
      const std::int64_t k = k0 + j;
      const std::int64_t g = call.group_of[std::size_t(k)];
      dequantize_values<T>(weight.qweight + (k / 8) * columns + begin, int(4 * (k % 8)),
                           scratch.zeros.data() + g * T, scratch.scales.data() + g * T,
                           tile + j * T);
    }
    apply_tile<T>(call.product.x + row_begin * in + k0, in, rows, tile, count, scratch.acc.data());
  }
  for (std::int64_t r = 0; r < rows; ++r) {
    store_outputs(call.product, row_begin + r, begin, T, scratch.acc.data() + r * T);
  }
}

template <int T>
QUIRE_LINEAR_CLONES void run_tile(const GptqCall& call, std::int64_t row_begin,
                                  std::int64_t row_end, std::int64_t begin, Scratch& scratch) {
  if (row_end - row_begin == 1) {
    multiply_row<T>(call, row_begin, begin, scratch);
  } else {
    multiply_rows<T>(call, row_begin, row_end, begin, scratch);
  }
}

}  // namespace

void gptq_product(ThreadPool& pool, const Product& product, const GptqWeight& weight) {
  const std::int64_t in = product.in_features;
  GptqCall call{product, weight, std::vector<std::int32_t>(std::size_t(in)), {}};
  // check_weight() has verified that every group index is in range.
  for (std::int64_t k = 0; k < in; ++k) {
    call.group_of[std::size_t(k)] =
        weight.g_idx ? weight.g_idx[k] : static_cast<std::int32_t>(k / weight.group_size);
  }
  call.group_sums.assign(std::size_t(product.rows * weight.groups), 0.0f);
  pool.parallel_for(product.rows, 16, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r) {
      float* sums = call.group_sums.data() + r * weight.groups;
      for (std::int64_t k = 0; k < in; ++k)
        sums[call.group_of[std::size_t(k)]] += product.x[r * in + k];
    }
  });
  const TileGrid grid(product.rows, product.out_features);
  pool.parallel_for(grid.size(), 1, [&](std::int64_t first, std::int64_t last) {
    Scratch scratch;
    for (std::int64_t item = first; item < last; ++item) {
      const ColumnTile& tile = grid.tile(item);
      if (tile.width == kWideTile) {
        run_tile<kWideTile>(call, grid.row_begin(item), grid.row_end(item), tile.begin, scratch);
      } else {
        run_tile<kNarrowTile>(call, grid.row_begin(item), grid.row_end(item), tile.begin, scratch);
      }
    }
  });
}

}  // namespace quire::kernels::linear_detail
