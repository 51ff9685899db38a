#pragma once

// Pieces shared by the products of the three weight formats: the shape of one
// call, how it is cut into tiles for the thread pool, and number conversions
// written so that the compiler can vectorize the loops that use them.

#include <bit>
#include <cstdint>
#include <vector>

#include "quire/kernels/cpu/thread_pool.h"
#include "quire/kernels/linear_weight.h"

// The loops of the products are plain C++ that the compiler vectorizes. On
// x86-64 each tile function is compiled twice, for the baseline (SSE2, 4
// floats a vector) and for AVX2 (8 floats), and the loader picks the clone the
// processor runs (GNU indirect functions); on an AVX2 machine the products ran
// 1.5 to 2 times faster, with identical results (every lane sums in the same
// order). Everything a tile function calls is forced inline so that it, too,
// is compiled for the chosen clone. Defining QUIRE_LINEAR_CLONES empty builds
// the baseline only.
#ifndef QUIRE_LINEAR_CLONES
#if defined(__x86_64__) && defined(__ELF__) && defined(__GNUC__)
#define QUIRE_LINEAR_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define QUIRE_LINEAR_CLONES
#endif
#endif
#ifndef QUIRE_LINEAR_INLINE
#define QUIRE_LINEAR_INLINE inline __attribute__((always_inline))
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

// FP16 to FP32 without branches, so a loop converting an array vectorizes;
// exact for every input, like half_to_float. Subnormals are produced by a
// subtraction of two normal numbers rather than by a multiplication, which some
// processors execute slowly when an operand is subnormal.
QUIRE_LINEAR_INLINE float widen_half(std::uint16_t h) {
  const std::uint32_t shifted = (static_cast<std::uint32_t>(h) & 0x7fffu) << 13;
  const std::uint32_t exponent = shifted & 0x0f800000u;
  // All-ones masks instead of conditionals keep the loop free of branches.
  const std::uint32_t is_special = 0u - static_cast<std::uint32_t>(exponent == 0x0f800000u);
  const std::uint32_t is_small = 0u - static_cast<std::uint32_t>(exponent == 0);
  // Rebias the exponent from 15 to 127; infinities and NaNs get all ones.
  const std::uint32_t normal = shifted + 0x38000000u + (is_special & 0x38000000u);
  // 2^-14 * (1 + m/1024) - 2^-14 = m * 2^-24, also right for zero.
  const std::uint32_t small =
      std::bit_cast<std::uint32_t>(std::bit_cast<float>(shifted + 0x38800000u) - 0x1p-14f);
  const std::uint32_t bits = (normal & ~is_small) | (small & is_small);
  return std::bit_cast<float>(bits | ((static_cast<std::uint32_t>(h) & 0x8000u) << 16));
}

QUIRE_LINEAR_INLINE float widen_bf16(std::uint16_t b) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16);
}

}  // namespace quire::kernels::linear_detail
