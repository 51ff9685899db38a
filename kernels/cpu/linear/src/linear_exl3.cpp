// EXL3 products: y = H(H(x * suh) W^) * svh + bias (Exl3Weight). The input
// rotation runs once per row, the trellis tiles are decoded inside the
// product (two tiles side by side make one 32-column tile of apply_tile, the
// register-blocked loop every batched product ends in, so that each decoded
// tile serves a whole block of rows), and the output rotation once per row.

#include <algorithm>
#include <cstring>
#include <vector>

#include "exl3_decode.h"
#include "linear_internal.h"
#include "quire/kernels/cpu/exl3_trellis.h"
#include "quire/kernels/cpu/half.h"

namespace quire::kernels::linear_detail {
namespace {

// Two tiles of 16 columns side by side.
constexpr int kPairWidth = 2 * kExl3TileSide;
static_assert(kPairWidth == kWideTile, "a pair of EXL3 tiles is one wide tile");

struct Exl3Call {
  const Product& product;
  const Exl3Weight& weight;
  const float* table;  // the codebook's values
  std::int64_t tiles_n = 0;
  std::vector<float> rotated;  // [rows, Kp]: H(x * suh)
  std::vector<float> sums;     // [rows, Np]: rotated W^, before the output rotation
};

void rotate_inputs(ThreadPool& pool, Exl3Call& call) {
  const Product& product = call.product;
  const std::int64_t in = product.in_features;
  const std::int64_t padded = call.weight.padded_in;
  call.rotated.assign(std::size_t(product.rows * padded), 0.0f);
  std::vector<float> suh(static_cast<std::size_t>(padded));
  for (std::int64_t k = 0; k < padded; ++k)
    suh[std::size_t(k)] = half_to_float(call.weight.suh[k]);
  pool.parallel_for(product.rows, 8, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r) {
      float* row = call.rotated.data() + r * padded;
      const float* x = product.x + r * in;
      for (std::int64_t k = 0; k < in; ++k)
        row[k] = x[k] * suh[std::size_t(k)];
      for (std::int64_t k = 0; k < padded; k += kExl3RotationSize)
        exl3_hadamard128(row + k);
    }
  });
}

// Columns [2 * pair * 16, +32) of the sums for rows [row_begin, row_end).
void multiply_pair(const Exl3Call& call, std::int64_t row_begin, std::int64_t row_end,
                   std::int64_t pair, std::vector<float>& acc) {
  const Exl3Weight& weight = call.weight;
  const std::int64_t padded_in = weight.padded_in;
  const std::int64_t rows = row_end - row_begin;
  const int words = exl3_tile_words(weight.bits);
  acc.assign(std::size_t(rows * kPairWidth), 0.0f);
  alignas(64) float tile[kExl3TileSide * kPairWidth];
  for (std::int64_t kt = 0; kt < padded_in / kExl3TileSide; ++kt) {
    const std::uint16_t* left = weight.trellis + (kt * call.tiles_n + 2 * pair) * words;
    exl3_decode_tile(left, weight.bits, call.table, tile, kPairWidth);
    exl3_decode_tile(left + words, weight.bits, call.table, tile + kExl3TileSide, kPairWidth);
    apply_tile<kWideTile>(call.rotated.data() + row_begin * padded_in + kt * kExl3TileSide,
                          padded_in, rows, tile, kExl3TileSide, acc.data());
  }
}

void finish_rows(ThreadPool& pool, const Exl3Call& call) {
  const Product& product = call.product;
  const std::int64_t padded = call.weight.padded_out;
  std::vector<float> svh(static_cast<std::size_t>(padded));
  for (std::int64_t n = 0; n < padded; ++n)
    svh[std::size_t(n)] = half_to_float(call.weight.svh[n]);
  pool.parallel_for(product.rows, 8, [&](std::int64_t begin, std::int64_t end) {
    std::vector<float> row(static_cast<std::size_t>(padded));
    for (std::int64_t r = begin; r < end; ++r) {
      std::memcpy(row.data(), call.sums.data() + r * padded, sizeof(float) * std::size_t(padded));
      for (std::int64_t n = 0; n < padded; n += kExl3RotationSize)
        exl3_hadamard128(row.data() + n);
      for (std::int64_t n = 0; n < padded; ++n)
        row[std::size_t(n)] *= svh[std::size_t(n)];
      store_outputs(product, r, 0, static_cast<int>(product.out_features), row.data());
    }
  });
}

}  // namespace

void exl3_product(ThreadPool& pool, const Product& product, const Exl3Weight& weight) {
  Exl3Call call{
      product, weight, exl3_codebook_table(weight.codebook), weight.padded_out / kExl3TileSide,
      {},      {}};
  rotate_inputs(pool, call);
  call.sums.assign(std::size_t(product.rows * weight.padded_out), 0.0f);
  const std::int64_t pairs = weight.padded_out / kPairWidth;
  const std::int64_t row_blocks = (product.rows + kRowBlock - 1) / kRowBlock;
  pool.parallel_for(pairs * row_blocks, 1, [&](std::int64_t first, std::int64_t last) {
    std::vector<float> acc;
    for (std::int64_t item = first; item < last; ++item) {
      const std::int64_t pair = item / row_blocks;
      const std::int64_t row_begin = (item % row_blocks) * kRowBlock;
      const std::int64_t row_end = std::min(product.rows, row_begin + kRowBlock);
      multiply_pair(call, row_begin, row_end, pair, acc);
      for (std::int64_t r = row_begin; r < row_end; ++r) {
        std::copy_n(acc.data() + (r - row_begin) * kPairWidth, kPairWidth,
                    call.sums.data() + r * weight.padded_out + pair * kPairWidth);
      }
    }
  });
  finish_rows(pool, call);
}

}  // namespace quire::kernels::linear_detail
