// Products of weights in GPTQ's layout, 4 or 8 bits (GPTQ, and AWQ and
// compressed-tensors' integer weights repacked into it at load). Input row k
// belongs to group g_idx[k] (k / group_size without act-order), whose zero
// point and scale apply per output column.

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

template <int Bits>
inline constexpr int kPerWord = 32 / Bits;

float scale_value(const GptqWeight& weight, std::int64_t index) {
  switch (weight.scale_dtype) {
    case DType::BF16:
      return bf16_to_float(static_cast<const std::uint16_t*>(weight.scales)[index]);
    case DType::F32:
      return static_cast<const float*>(weight.scales)[index];
    default:
      return half_to_float(static_cast<const std::uint16_t*>(weight.scales)[index]);
  }
}

template <int Bits>
float zero_point(const GptqWeight& weight, std::int64_t columns, std::int64_t g, std::int64_t n) {
  // Symmetric weights store no zero points: their values carry the offset.
  if (weight.qzeros == nullptr) return static_cast<float>(1 << (Bits - 1));
  const std::uint32_t word = weight.qzeros[g * (columns / kPerWord<Bits>)+n / kPerWord<Bits>];
  const std::uint32_t stored = (word >> (Bits * (n % kPerWord<Bits>))) & kValueMask<Bits>;
  // GPTQ v1 checkpoints store the zero point minus one.
  return static_cast<float>(stored + (weight.exact_zeros ? 0u : 1u));
}

// The zero points and scales of every group for the T columns from `begin`.
template <int Bits, int T>
void load_group_parameters(const GptqCall& call, std::int64_t begin, Scratch& scratch) {
  const GptqWeight& weight = call.weight;
  const std::int64_t columns = call.product.out_features;
  scratch.zeros.resize(std::size_t(weight.groups * T));
  scratch.scales.resize(std::size_t(weight.groups * T));
  for (std::int64_t g = 0; g < weight.groups; ++g) {
    for (int i = 0; i < T; ++i) {
      scratch.zeros[std::size_t(g * T + i)] = zero_point<Bits>(weight, columns, g, begin + i);
      scratch.scales[std::size_t(g * T + i)] = scale_value(weight, g * columns + begin + i);
    }
  }
}

// One input row. With q the raw values, sum_k x[k] (q - z[g]) s[g]
// = sum_g s[g] (sum_{k in g} x[k] q - z[g] sum_{k in g} x[k]): the loop over
// the weights only adds x * q into the accumulator row of the input's group.
template <int Bits, int T>
QUIRE_LINEAR_INLINE void multiply_row(const GptqCall& call, std::int64_t row, std::int64_t begin,
                                      Scratch& scratch) {
  const GptqWeight& weight = call.weight;
  const std::int64_t in = call.product.in_features;
  const std::int64_t columns = call.product.out_features;
  const std::int64_t groups = weight.groups;
  scratch.acc.assign(std::size_t(groups * T), 0.0f);
  float* acc = scratch.acc.data();
  const float* x = call.product.x + row * in;
  for (std::int64_t kw = 0; kw < in / kPerWord<Bits>; ++kw) {
    const std::uint32_t* words = weight.qweight + kw * columns + begin;
    for (int v = 0; v < kPerWord<Bits>; ++v) {
      const std::int64_t k = kw * kPerWord<Bits> + v;
      accumulate_values<Bits, false, T>(words, words, Bits * v, 0, x[k],
                                        acc + std::int64_t(call.group_of[std::size_t(k)]) * T);
    }
  }
  load_group_parameters<Bits, T>(call, begin, scratch);
  float result[T] = {};
  const float* sums = call.group_sums.data() + row * groups;
  for (std::int64_t g = 0; g < groups; ++g) {
    const float* zero = scratch.zeros.data() + g * T;
    const float* scale = scratch.scales.data() + g * T;
    for (int i = 0; i < T; ++i)
      result[i] += scale[i] * (acc[g * T + i] - zero[i] * sums[g]);
  }
  store_outputs(call.product, row, begin, T, result);
}

template <int Bits, int T>
QUIRE_LINEAR_INLINE void dequantize_values(const std::uint32_t* __restrict words, int shift,
                                           const float* __restrict zero,
                                           const float* __restrict scale, float* __restrict out) {
  for (int i = 0; i < T; ++i) {
    const auto value = static_cast<std::int32_t>((words[i] >> shift) & kValueMask<Bits>);
    out[i] = (static_cast<float>(value) - zero[i]) * scale[i];
  }
}

// Several input rows: every 32 input rows are dequantized once into `tile`
// (each row with its own group's zero points and scales) and applied to all.
template <int Bits, int T>
QUIRE_LINEAR_INLINE void multiply_rows(const GptqCall& call, std::int64_t row_begin,
                                       std::int64_t row_end, std::int64_t begin, Scratch& scratch) {
  const GptqWeight& weight = call.weight;
  const std::int64_t in = call.product.in_features;
  const std::int64_t columns = call.product.out_features;
  const std::int64_t rows = row_end - row_begin;
  load_group_parameters<Bits, T>(call, begin, scratch);
  scratch.acc.assign(std::size_t(rows * T), 0.0f);
  float tile[32 * T];
  for (std::int64_t k0 = 0; k0 < in; k0 += 32) {
    const int count = static_cast<int>(std::min<std::int64_t>(32, in - k0));
    for (int j = 0; j < count; ++j) {
      const std::int64_t k = k0 + j;
      const std::int64_t g = call.group_of[std::size_t(k)];
      dequantize_values<Bits, T>(weight.qweight + (k / kPerWord<Bits>)*columns + begin,
                                 int(Bits * (k % kPerWord<Bits>)), scratch.zeros.data() + g * T,
                                 scratch.scales.data() + g * T, tile + j * T);
    }
    apply_tile<T>(call.product.x + row_begin * in + k0, in, rows, tile, count, scratch.acc.data());
  }
  for (std::int64_t r = 0; r < rows; ++r) {
    store_outputs(call.product, row_begin + r, begin, T, scratch.acc.data() + r * T);
  }
}

template <int Bits, int T>
QUIRE_LINEAR_CLONES void run_tile(const GptqCall& call, std::int64_t row_begin,
                                  std::int64_t row_end, std::int64_t begin, Scratch& scratch) {
  if (row_end - row_begin == 1) {
    multiply_row<Bits, T>(call, row_begin, begin, scratch);
  } else {
    multiply_rows<Bits, T>(call, row_begin, row_end, begin, scratch);
  }
}

template <int Bits>
void run_tiles(const GptqCall& call, ThreadPool& pool) {
  const TileGrid grid(call.product.rows, call.product.out_features);
  pool.parallel_for(grid.size(), 1, [&](std::int64_t first, std::int64_t last) {
    Scratch scratch;
    for (std::int64_t item = first; item < last; ++item) {
      const ColumnTile& tile = grid.tile(item);
      if (tile.width == kWideTile) {
        run_tile<Bits, kWideTile>(call, grid.row_begin(item), grid.row_end(item), tile.begin,
                                  scratch);
      } else {
        run_tile<Bits, kNarrowTile>(call, grid.row_begin(item), grid.row_end(item), tile.begin,
                                    scratch);
      }
    }
  });
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
  if (weight.bits == 8) {
    run_tiles<8>(call, pool);
  } else {
    run_tiles<4>(call, pool);
  }
}

}  // namespace quire::kernels::linear_detail
