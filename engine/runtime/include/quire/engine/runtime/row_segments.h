#pragma once

// How a step's rows are cut into products. Where the backend's products
// choose their arithmetic by the number and kind of rows (the CPU's: 8-bit
// inputs for decode rows, few-row kernels up to 16 rows, tiles above), a
// product over several sequences would give a sequence other bits than it
// gets alone, and a greedy reply could end differently when the server is
// busy. There every prompt sequence's rows are a product of their own (what
// they are alone), and the decode rows (one token of each single-token
// sequence) go together in products of at most the backend's invariant
// count, whose kernels give each row the bits it gets alone. Elsewhere a
// step's rows are one product.

#include <cstdint>
#include <span>
#include <vector>

#include "quire/kernels/linear_weight.h"

namespace quire::engine {

struct RowSegment {
  std::int64_t first = 0;  // the segment's first row
  std::int64_t rows = 0;
  kernels::ProductRows kind = kernels::ProductRows::prompt;
};

// Segments of rows whose i-th row belongs to sequence row_sequence[i]
// (ascending) of kinds sequence_kind. invariant_decode_rows: the backend's
// (Backend::invariant_decode_rows); 0 gives one segment of every row,
// decode when every row is.
std::vector<RowSegment> row_segments(std::span<const std::int32_t> row_sequence,
                                     std::span<const kernels::ProductRows> sequence_kind,
                                     std::int64_t invariant_decode_rows);

}  // namespace quire::engine
