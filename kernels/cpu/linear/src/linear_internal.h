#pragma once

// Pieces shared by the products of the three weight formats: the shape of one
// call, how it is cut into tiles for the thread pool, and number conversions
// written so that the compiler can vectorize the loops that use them.

#include <cstdint>
#include <vector>

#include "quire/kernels/cpu/simd.h"
#include "quire/kernels/cpu/thread_pool.h"
#include "quire/kernels/linear_weight.h"

// The loops of the products are plain C++ that the compiler vectorizes. On
// x86-64 each tile function is compiled for the baseline and for x86-64-v3
// (simd.h), and the loader picks the clone the processor runs. Against the
// baseline (SSE2), AVX2 ran the products 1.5 to 2 times faster; the FMA of v3
// added a few percent more (batch-1 decode of the 96M benchmark model, 77 to
// 82 tokens/s). The clones sum every lane in the same order. Everything a tile
// function calls is forced inline so that it, too, is compiled for the chosen
// clone. Defining QUIRE_LINEAR_CLONES empty builds the baseline only.
#ifndef QUIRE_LINEAR_CLONES
#define QUIRE_LINEAR_CLONES QUIRE_CPU_CLONES
#endif
#ifndef QUIRE_LINEAR_INLINE
#define QUIRE_LINEAR_INLINE QUIRE_CPU_INLINE
#endif

namespace quire::kernels::linear_detail {

// One call of linear(): out[rows, N] = x[rows, K] W^T + bias.
struct Product {
  const float* x = nullptr;
  std::int64_t rows = 0;
  std::int64_t in_features = 0;   // K
  std::int64_t out_features = 0;  // N
  const float* bias = nullptr;    // [N] widened to FP32, or nullptr
  float* out = nullptr;
};

// Quantized products work on tiles of 32 output columns, a width the inner
// loops vectorize at any SIMD width; columns left over (N is a multiple of 8)
// go in tiles of 8.
inline constexpr int kWideTile = 32;
inline constexpr int kNarrowTile = 8;

struct ColumnTile {
  std::int64_t begin = 0;
  int width = kWideTile;
};

// Rows of one work item in a batched product. The decoded weights of a tile
// are reused this many times before the next tile is decoded.
inline constexpr std::int64_t kRowBlock = 32;

// The work items of a product: every (row block, column tile) pair, tile-major
// so that consecutive items of one thread reuse the weights in its cache.
class TileGrid {
 public:
  TileGrid(std::int64_t rows, std::int64_t columns);
  std::int64_t size() const { return static_cast<std::int64_t>(tiles_.size()) * row_blocks_; }
  const ColumnTile& tile(std::int64_t item) const {
    return tiles_[std::size_t(item / row_blocks_)];
  }
  std::int64_t row_begin(std::int64_t item) const { return (item % row_blocks_) * kRowBlock; }
  std::int64_t row_end(std::int64_t item) const;

 private:
  std::int64_t rows_;
  std::int64_t row_blocks_;
  std::vector<ColumnTile> tiles_;
};

// Writes `width` accumulated outputs of one row (those below N) plus the bias.
void store_outputs(const Product& product, std::int64_t row, std::int64_t begin, int width,
                   const float* values);

void dense_product(ThreadPool& pool, const Product& product, const DenseWeight& weight);
void exl2_product(ThreadPool& pool, const Product& product, const Exl2Weight& weight);
void gptq_product(ThreadPool& pool, const Product& product, const GptqWeight& weight);
// out[n - begin] = x . w[n] for FP16 rows n in [begin, end) of length k_count,
// with AVX2, FMA and F16C; false (nothing written) where the processor lacks
// them (dense_dots_f16.cpp).
bool f16_dots(const float* x, const std::uint16_t* w, std::int64_t k_count, std::int64_t begin,
              std::int64_t end, float* out);
// EXL2 products of at most kExl2FewRows input rows (decode steps of a few
// jobs), `xp` already in quantized order and `columns` the row length of
// q_weight: each weight is unpacked once for all rows (linear_exl2_row.cpp).
inline constexpr std::int64_t kExl2FewRows = 4;
void exl2_few_rows_product(ThreadPool& pool, const Product& product, const Exl2Weight& weight,
                           std::int64_t columns, const float* xp);

// acc[r * T + i] += sum_j x[r * x_stride + j] * tile[j * T + i]: a tile of
// `count` decoded weight rows ([input][output]) applied to `rows` input rows.
// Every format's batched product ends in this loop. Defined out of line (for
// T = 8 and 32) so that its code does not depend on the caller it would be
// inlined into: the compiler keeps the sums in registers only in a function
// this small.
template <int T>
void apply_tile(const float* x, std::int64_t x_stride, std::int64_t rows, const float* tile,
                int count, float* acc);

// Throws std::invalid_argument when the descriptor cannot describe a valid
// weight; shared by linear() and dequantize().
void check_weight(const LinearWeight& weight);

// The branch-free conversions of simd.h, used by every format's tiles.
using kernels::widen_bf16;
using kernels::widen_half;

}  // namespace quire::kernels::linear_detail
