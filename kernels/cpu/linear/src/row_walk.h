#pragma once

// How the decode kernels of dense FP16 and FP8 weights
// (dense_dots_f16.cpp, dense_dots_fp8.cpp) walk their weight rows: blocks of
// BlockRows rows at a time where the caller asks for them, then one row at a
// time, each against groups of up to four input rows, the next rows fetched
// while these are multiplied. The kernels differ in how they widen the
// weights, not in this.

#include <algorithm>
#include <cstdint>

namespace quire::kernels::linear_detail {

// out[r * (end - begin) + (n - begin)] = x[r] . w[n] for the `rows` inputs
// (k_count apart) and the weight rows n in [begin, end).
template <typename Element>
struct RowWalk {
  const float* x;
  std::int64_t rows;
  const Element* w;
  std::int64_t k_count;
  std::int64_t begin;
  std::int64_t end;
  float* out;
};

// block(inputs, x, rows_at, fetch, sums): the sums of BlockRows weight rows
// against 1 to 4 inputs, sums[o * 4 + i]; row(inputs, x, row_at, fetch,
// sums): one weight row's, sums[i]. `fetch` is the block or row to fetch
// meanwhile (given with the first group of inputs only, while the weights
// come from memory; later groups find them in cache), or null. Single rows
// fetch the row `ahead` rows on.
template <int BlockRows, typename Element, typename Block, typename Row>
void walk_rows(const RowWalk<Element>& walk, bool blocks, std::int64_t ahead, Block&& block,
               Row&& row) {
  const std::int64_t k_count = walk.k_count;
  const std::int64_t width = walk.end - walk.begin;
  const auto store = [&](std::int64_t r, std::int64_t inputs, std::int64_t n, const float* sums,
                         int sums_per_row) {
    for (int o = 0; o < sums_per_row; ++o) {
      for (std::int64_t i = 0; i < inputs; ++i)
        walk.out[(r + i) * width + (n + o - walk.begin)] = sums[o * 4 + i];
    }
  };
  std::int64_t n = walk.begin;
  if (blocks) {
    for (; n + BlockRows <= walk.end; n += BlockRows) {
      const Element* rows_at = walk.w + n * k_count;
      const Element* next = n + 2 * BlockRows <= walk.end ? rows_at + BlockRows * k_count : nullptr;
      for (std::int64_t r = 0; r < walk.rows; r += 4) {
        const std::int64_t inputs = std::min<std::int64_t>(4, walk.rows - r);
        float sums[BlockRows * 4];
        block(inputs, walk.x + r * k_count, rows_at, r == 0 ? next : nullptr, sums);
        store(r, inputs, n, sums, BlockRows);
      }
    }
  }
  for (; n < walk.end; ++n) {
    const Element* row_at = walk.w + n * k_count;
    const Element* next = n + ahead < walk.end ? walk.w + (n + ahead) * k_count : nullptr;
    for (std::int64_t r = 0; r < walk.rows; r += 4) {
      const std::int64_t inputs = std::min<std::int64_t>(4, walk.rows - r);
      float sums[4];
      row(inputs, walk.x + r * k_count, row_at, r == 0 ? next : nullptr, sums);
      store(r, inputs, n, sums, 1);
    }
  }
}

}  // namespace quire::kernels::linear_detail
