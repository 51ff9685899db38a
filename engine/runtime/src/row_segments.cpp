#include "quire/engine/runtime/row_segments.h"

#include <cstddef>

namespace quire::engine {

std::vector<RowSegment> row_segments(std::span<const std::int32_t> row_sequence,
                                     std::span<const kernels::ProductRows> sequence_kind,
                                     std::int64_t invariant_decode_rows) {
  std::vector<RowSegment> segments;
  const auto rows = static_cast<std::int64_t>(row_sequence.size());
  if (rows == 0) return segments;
  const auto kind_of = [&](std::int64_t row) {
    return sequence_kind[static_cast<std::size_t>(row_sequence[static_cast<std::size_t>(row)])];
  };
  if (invariant_decode_rows <= 0) {
    bool all_decode = true;
    for (std::int64_t r = 0; r < rows; ++r)
      all_decode = all_decode && kind_of(r) == kernels::ProductRows::decode;
    segments.push_back(
        {0, rows, all_decode ? kernels::ProductRows::decode : kernels::ProductRows::prompt});
    return segments;
  }
  for (std::int64_t r = 0; r < rows; ++r) {
    const kernels::ProductRows kind = kind_of(r);
    const bool joins = [&] {
      if (segments.empty()) return false;
      const RowSegment& last = segments.back();
      if (last.kind != kind) return false;
      if (kind == kernels::ProductRows::decode) return last.rows < invariant_decode_rows;
      // Prompt rows join only their own sequence's.
      return row_sequence[static_cast<std::size_t>(last.first)] ==
             row_sequence[static_cast<std::size_t>(r)];
    }();
    if (joins) {
      ++segments.back().rows;
    } else {
      segments.push_back({r, 1, kind});
    }
  }
  return segments;
}

}  // namespace quire::engine
