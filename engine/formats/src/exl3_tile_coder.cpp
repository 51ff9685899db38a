#include "exl3_tile_coder.h"

#include <memory>
#include <stdexcept>
#include <vector>

#include "quire/engine/formats/exl3_trellis_search.h"
#include "quire/kernels/cpu/exl3_trellis.h"

namespace quire::engine::formats::detail {
namespace {

// Each thread's search, kept between calls: its rows take megabytes, too many
// to allocate per tile. The pool's threads end with the coder, and their
// searches with them.
Exl3TrellisSearch& thread_search(int bits, kernels::Exl3Codebook codebook) {
  thread_local std::unique_ptr<Exl3TrellisSearch> search;
  if (!search || search->bits() != bits || search->codebook() != codebook) {
    search = std::make_unique<Exl3TrellisSearch>(bits, codebook);
  }
  return *search;
}

}  // namespace

Exl3TileCoder::Exl3TileCoder(int bits, kernels::Exl3Codebook codebook, int threads)
    : bits_(bits), codebook_(codebook), pool_(threads) {}

void Exl3TileCoder::code(std::span<const float> targets, std::span<float> decoded,
                         std::span<std::uint16_t> states) {
  if (targets.size() % kTileValues != 0 || decoded.size() != targets.size() ||
      (!states.empty() && states.size() != targets.size())) {
    throw std::invalid_argument("EXL3 tile coder: whole tiles of 256 values, decoded alike");
  }
  const auto tiles = static_cast<std::int64_t>(targets.size() / kTileValues);
  pool_.parallel_for(tiles, 1, [&](std::int64_t begin, std::int64_t end) {
    Exl3TrellisSearch& search = thread_search(bits_, codebook_);
    std::vector<std::uint16_t> scratch(kTileValues);
    for (std::int64_t tile = begin; tile < end; ++tile) {
      const std::size_t at = std::size_t(tile) * kTileValues;
      const std::span<std::uint16_t> tile_states =
          states.empty() ? std::span<std::uint16_t>(scratch) : states.subspan(at, kTileValues);
      search.encode(targets.subspan(at, kTileValues), tile_states,
                    decoded.subspan(at, kTileValues));
    }
  });
  tiles_coded_ += tiles;
}

void gather_tile(const float* matrix, std::int64_t columns, std::int64_t row_tile,
                 std::int64_t column_tile, float* tile) {
  const float* corner = matrix + row_tile * 16 * columns + column_tile * 16;
  for (int t = 0; t < kernels::kExl3TileWeights; ++t)
    tile[t] = corner[kernels::exl3_tile_row(t) * columns + kernels::exl3_tile_column(t)];
}

void scatter_tile(const float* tile, std::int64_t columns, std::int64_t row_tile,
                  std::int64_t column_tile, float* matrix) {
  float* corner = matrix + row_tile * 16 * columns + column_tile * 16;
  for (int t = 0; t < kernels::kExl3TileWeights; ++t)
    corner[kernels::exl3_tile_row(t) * columns + kernels::exl3_tile_column(t)] = tile[t];
}

}  // namespace quire::engine::formats::detail
