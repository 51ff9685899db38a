// EXL2 products. Row k of the quantized [K, columns] matrix multiplies input
// perm[k], so the inputs are gathered into that order once per call and the
// weights are then read strictly in storage order, group after group.

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "linear_internal.h"
#include "packed_values.h"
#include "quire/kernels/cpu/exl2_scale.h"
#include "quire/kernels/cpu/half.h"

namespace quire::kernels::linear_detail {
namespace {

struct Exl2Call {
  const Product& product;
  const Exl2Weight& weight;
  std::int64_t columns;  // q_weight row length (N padded by the converter)
  const float* xp;       // inputs in quantized order, [rows, K]
};

// scale[i] = fp16(qs^2 * q_scale_max[g] / 256) for the columns of a tile (see
// exl2_scale.h: exllamav2 rounds the scale to FP16).
template <int T>
QUIRE_LINEAR_INLINE void group_scales(const Exl2Call& call, std::size_t g, std::int64_t begin,
                                      float* scale) {
  const std::uint16_t max_scale = call.weight.q_scale_max[g];
  const std::uint32_t* words = call.weight.q_scale + std::int64_t(g) * (call.columns / 8);
  for (int i = 0; i < T; ++i) {
    const std::int64_t n = begin + i;
    const auto qs = static_cast<int>((words[n / 8] >> (4 * (n % 8))) & 15u) + 1;
    scale[i] = exl2_scale(qs, max_scale);
  }
}

template <int Bits, int T>
QUIRE_LINEAR_INLINE void accumulate_group(const Exl2Call& call, const Exl2Group& group,
                                          std::int64_t begin, const float* x, float* acc) {
  const std::uint32_t* words = call.weight.q_weight + group.q_row * call.columns + begin;
  constexpr std::int32_t zero = 1 << (Bits - 1);
  for (int k0 = 0; k0 < group.rows; k0 += 32) {
    const std::uint32_t* block = words + std::int64_t(k0 / 32) * Bits * call.columns;
    accumulate_block<Bits, T>(block, call.columns, x + k0, std::min(32, group.rows - k0), zero,
                              acc);
  }
}

template <int Bits, int T>
QUIRE_LINEAR_INLINE void decode_group_block(const Exl2Call& call, const Exl2Group& group,
                                            std::int64_t begin, int k0, const float* scale,
                                            float* tile) {
  const std::uint32_t* block =
      call.weight.q_weight + (group.q_row + std::int64_t(k0 / 32) * Bits) * call.columns + begin;
  decode_block<Bits, T>(block, call.columns, std::min(32, group.rows - k0), 1 << (Bits - 1), scale,
                        tile);
}

// One input row: per group, sum x * (q - zero) over the group's rows for the
// tile's columns, then scale the sums once.
template <int T>
QUIRE_LINEAR_INLINE void multiply_row(const Exl2Call& call, std::int64_t row, std::int64_t begin) {
  const float* xp = call.xp + row * call.product.in_features;
  float result[T] = {};
  float scale[T];
  for (std::size_t g = 0; g < call.weight.groups.size(); ++g) {
    const Exl2Group& group = call.weight.groups[g];
    float acc[T] = {};
    const float* x = xp + group.first_row;
    switch (group.bits) {
      case 2:
        accumulate_group<2, T>(call, group, begin, x, acc);
        break;
      case 3:
        accumulate_group<3, T>(call, group, begin, x, acc);
        break;
      case 4:
        accumulate_group<4, T>(call, group, begin, x, acc);
        break;
      case 5:
        accumulate_group<5, T>(call, group, begin, x, acc);
        break;
      case 6:
        accumulate_group<6, T>(call, group, begin, x, acc);
        break;
      default:
        accumulate_group<8, T>(call, group, begin, x, acc);
        break;
    }
    group_scales<T>(call, g, begin, scale);
    for (int i = 0; i < T; ++i)
      result[i] += scale[i] * acc[i];
  }
  store_outputs(call.product, row, begin, T, result);
}

// Several input rows: every block of 32 quantized rows is decoded once into
// `tile` and applied to all of them.
template <int T>
QUIRE_LINEAR_INLINE void multiply_rows(const Exl2Call& call, std::int64_t row_begin,
                                       std::int64_t row_end, std::int64_t begin,
                                       std::vector<float>& acc) {
  const std::int64_t rows = row_end - row_begin;
  const std::int64_t in = call.product.in_features;
  acc.assign(std::size_t(rows * T), 0.0f);
  float tile[32 * T];
  float scale[T];
  for (std::size_t g = 0; g < call.weight.groups.size(); ++g) {
    const Exl2Group& group = call.weight.groups[g];
    group_scales<T>(call, g, begin, scale);
    for (int k0 = 0; k0 < group.rows; k0 += 32) {
      switch (group.bits) {
        case 2:
          decode_group_block<2, T>(call, group, begin, k0, scale, tile);
          break;
        case 3:
          decode_group_block<3, T>(call, group, begin, k0, scale, tile);
          break;
        case 4:
          decode_group_block<4, T>(call, group, begin, k0, scale, tile);
          break;
        case 5:
          decode_group_block<5, T>(call, group, begin, k0, scale, tile);
          break;
        case 6:
          decode_group_block<6, T>(call, group, begin, k0, scale, tile);
          break;
        default:
          decode_group_block<8, T>(call, group, begin, k0, scale, tile);
          break;
      }
      const float* x = call.xp + row_begin * in + group.first_row + k0;
      apply_tile<T>(x, in, rows, tile, std::min(32, group.rows - k0), acc.data());
    }
  }
  for (std::int64_t r = 0; r < rows; ++r) {
    store_outputs(call.product, row_begin + r, begin, T, acc.data() + r * T);
  }
}

template <int T>
QUIRE_LINEAR_CLONES void run_tile(const Exl2Call& call, std::int64_t row_begin,
                                  std::int64_t row_end, std::int64_t begin,
                                  std::vector<float>& scratch) {
  if (row_end - row_begin == 1) {
    multiply_row<T>(call, row_begin, begin);
  } else {
    multiply_rows<T>(call, row_begin, row_end, begin, scratch);
  }
}

}  // namespace

void exl2_permute_inputs(ThreadPool& pool, const Product& product, const Exl2Weight& weight,
                         std::vector<float>& xp) {
  const std::int64_t in = product.in_features;
  grow_to(xp, std::size_t(product.rows * in));
  float* target_rows = xp.data();
  const auto gather = [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r) {
      const float* source = product.x + r * in;
      float* target = target_rows + r * in;
      for (std::int64_t k = 0; k < in; ++k)
        target[k] = source[weight.perm[k]];
    }
  };
  pool.parallel_for(product.rows, 16, gather);
}

std::int64_t exl2_columns(const Product& product, const Exl2Weight& weight) {
  return weight.q_columns == 0 ? product.out_features : weight.q_columns;
}

void exl2_product(ThreadPool& pool, const Product& product, const Exl2Weight& weight) {
  const ScratchLease<std::vector<float>> xp;
  const std::int64_t columns = exl2_columns(product, weight);
  if (product.rows <= kExl2FewRows) {
    // Its slices gather their own inputs.
    grow_to(*xp, std::size_t(product.rows * product.in_features));
    exl2_few_rows_product(pool, product, weight, columns, xp->data());
    return;
  }
  exl2_permute_inputs(pool, product, weight, *xp);
  exl2_batched_product(pool, product, weight, columns, xp->data());
}

void exl2_batched_product(ThreadPool& pool, const Product& product, const Exl2Weight& weight,
                          std::int64_t columns, const float* xp, Exl2BatchPath path) {
  // The VNNI tiles unless the AVX2 ones are asked for or the processor lacks VNNI.
  const bool narrow = path == Exl2BatchPath::integer_tiles_256 || !exl2_batched_integer_supported();
  const bool integer_possible =
      (narrow ? exl2_batched_integer_256_supported() : exl2_batched_integer_supported()) &&
      exl2_batched_integer_takes(weight);
  if ((path == Exl2BatchPath::integer_tiles || path == Exl2BatchPath::integer_tiles_256) &&
      !integer_possible) {
    throw std::logic_error(
        "the integer EXL2 tiles need AVX2 (or AVX-512 VNNI) and groups of whole 32-row blocks");
  }
  const bool integer = integer_possible && path != Exl2BatchPath::float_tiles;
  const ScratchLease<Exl2IntegerInputs> inputs;
  if (integer) {
    const auto rows = static_cast<int>(product.rows);
    exl2_integer_layout(weight, rows, product.in_features, false, *inputs);
    pool.parallel_for(static_cast<std::int64_t>(weight.groups.size()), 4,
                      [&](std::int64_t first, std::int64_t last) {
                        exl2_integer_quantize(weight, xp, rows, product.in_features,
                                              std::size_t(first), std::size_t(last), *inputs);
                      });
  }
  const Exl2Call call{product, weight, columns, xp};
  const TileGrid grid(product.rows, call.columns);
  pool.parallel_for(grid.size(), 1, [&](std::int64_t first, std::int64_t last) {
    std::vector<float> scratch;
    std::vector<std::int32_t> pairs;
    for (std::int64_t item = first; item < last; ++item) {
      const ColumnTile& tile = grid.tile(item);
      if (tile.begin >= product.out_features) continue;  // padding columns only
      const std::int64_t row_begin = grid.row_begin(item);
      const std::int64_t row_end = grid.row_end(item);
      if (tile.width == kWideTile && integer) {
        scratch.resize(std::size_t((row_end - row_begin) * kWideTile));
        if (narrow) {
          exl2_batched_integer_tile_256(weight, columns, *inputs, row_begin, row_end, tile.begin,
                                        pairs, scratch.data());
        } else {
          exl2_batched_integer_tile(weight, columns, *inputs, row_begin, row_end, tile.begin, pairs,
                                    scratch.data());
        }
        for (std::int64_t r = row_begin; r < row_end; ++r)
          store_outputs(product, r, tile.begin, kWideTile,
                        scratch.data() + (r - row_begin) * kWideTile);
      } else if (tile.width == kWideTile) {
        run_tile<kWideTile>(call, row_begin, row_end, tile.begin, scratch);
      } else {
        run_tile<kNarrowTile>(call, row_begin, row_end, tile.begin, scratch);
      }
    }
  });
}

}  // namespace quire::kernels::linear_detail
