#pragma once

// Private to the EXL3 quantizer: coding many tiles at once, one trellis
// search per thread, and moving tiles in and out of a matrix.

#include <atomic>
#include <cstdint>
#include <span>

#include "quire/kernels/cpu/exl3_trellis.h"
#include "quire/kernels/cpu/thread_pool.h"
#include "quire/kernels/linear_weight.h"

namespace quire::engine::formats::detail {

// Values in a tile, as the quantizer's buffers count them.
inline constexpr std::size_t kTileValues = kernels::kExl3TileWeights;

class Exl3TileCoder {
 public:
  Exl3TileCoder(int bits, kernels::Exl3Codebook codebook, int threads);

  // Codes tiles * 256 targets, each tile's in stream order, into their
  // codebook values and (where `states` is not empty) trellis states.
  void code(std::span<const float> targets, std::span<float> decoded,
            std::span<std::uint16_t> states);

  int bits() const { return bits_; }
  std::int64_t tiles_coded() const { return tiles_coded_.load(); }
  kernels::ThreadPool& pool() { return pool_; }

 private:
  int bits_;
  kernels::Exl3Codebook codebook_;
  kernels::ThreadPool pool_;
  std::atomic<std::int64_t> tiles_coded_{0};
};

// Tile (row_tile, column_tile) of a row-major matrix with `columns`
// columns, as 256 values in stream order (exl3_tile_row, exl3_tile_column),
// and back.
void gather_tile(const float* matrix, std::int64_t columns, std::int64_t row_tile,
                 std::int64_t column_tile, float* tile);
void scatter_tile(const float* tile, std::int64_t columns, std::int64_t row_tile,
                  std::int64_t column_tile, float* matrix);

}  // namespace quire::engine::formats::detail
