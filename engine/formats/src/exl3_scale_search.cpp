#include "exl3_scale_search.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <vector>

#include "quire/kernels/cpu/exl3_trellis.h"

namespace quire::engine::formats::detail {
namespace {

std::vector<float> sample_tiles(const Exl3Regularized& regularized) {
  const std::int64_t row_tiles = regularized.padded_in / 16;
  const std::int64_t column_tiles = regularized.padded_out / 16;
  std::vector<std::int64_t> picks;  // row_tile * column_tiles + column_tile
  const std::int64_t diagonal = std::max(row_tiles, column_tiles);
  constexpr std::int64_t kWidth = 3;
  for (std::int64_t i = 0; i < diagonal; ++i) {
    for (std::int64_t w = 0; w < kWidth; ++w)
      picks.push_back((i % row_tiles) * column_tiles + (i + w) % column_tiles);
  }
  const std::int64_t tiles = row_tiles * column_tiles;
  const std::int64_t extremes =
      std::min(std::max<std::int64_t>(8, diagonal * kWidth / 16), (tiles + 1) / 2);
  std::vector<double> mean_square(static_cast<std::size_t>(tiles), 0.0);
  for (std::int64_t k = 0; k < regularized.padded_in; ++k) {
    for (std::int64_t n = 0; n < regularized.padded_out; ++n) {
      const double value = regularized.weight[std::size_t(k * regularized.padded_out + n)];
      mean_square[std::size_t((k / 16) * column_tiles + n / 16)] += value * value;
    }
  }
  std::vector<std::int64_t> order(static_cast<std::size_t>(tiles));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
    return mean_square[std::size_t(a)] > mean_square[std::size_t(b)];
  });
  for (std::int64_t i = 0; i < extremes; ++i) {
    picks.push_back(order[std::size_t(i)]);
    picks.push_back(order[std::size_t(tiles - 1 - i)]);
  }
  std::vector<float> samples(picks.size() * kTileValues);
  for (std::size_t i = 0; i < picks.size(); ++i) {
    gather_tile(regularized.weight.data(), regularized.padded_out, picks[i] / column_tiles,
                picks[i] % column_tiles, samples.data() + i * kTileValues);
  }
  return samples;
}

// The squared error of coding `tiles` times `scale`, measured at their own
// size, over their squared sum.
double coded_error(const std::vector<float>& tiles, double scale, Exl3TileCoder& coder) {
  std::vector<float> scaled(tiles.size()), decoded(tiles.size());
  for (std::size_t i = 0; i < tiles.size(); ++i)
    scaled[i] = static_cast<float>(double(tiles[i]) * scale);
  coder.code(scaled, decoded, {});
  double error = 0.0, total = 0.0;
  for (std::size_t i = 0; i < tiles.size(); ++i) {
    const double difference = double(decoded[i]) / scale - double(tiles[i]);
    error += difference * difference;
    total += double(tiles[i]) * double(tiles[i]);
  }
  return total > 0.0 ? error / total : 0.0;
}

}  // namespace

Exl3ScaleChoice search_exl3_scale(const Exl3Regularized& regularized, Exl3TileCoder& coder) {
  const std::vector<float> samples = sample_tiles(regularized);
  std::vector<float> third;
  for (std::size_t tile = 0; tile < samples.size() / kTileValues; tile += 3) {
    third.insert(third.end(), samples.begin() + std::ptrdiff_t(tile * kTileValues),
                 samples.begin() + std::ptrdiff_t((tile + 1) * kTileValues));
  }
  double coarse_best = 0.1, coarse_error = 0.0;
  for (int i = 0; i < 10; ++i) {
    const double scale = 0.1 + 0.2 * i;
    const double error = coded_error(third, scale, coder);
    if (i == 0 || error < coarse_error) coarse_best = scale, coarse_error = error;
  }
  constexpr double kStep = 0.075;
  double fine[5], errors[5];
  int best = 0;
  for (int i = 0; i < 5; ++i) {
    fine[i] = coarse_best + kStep * (i - 2);
    // Around the coarse grid's smallest scale the fine one reaches below 0.
    errors[i] = fine[i] > 0.0 ? coded_error(samples, fine[i], coder)
                              : std::numeric_limits<double>::infinity();
    if (errors[i] < errors[best]) best = i;
  }
  double offset = 0.0;
  if (best > 0 && best < 4) {
    const double curvature = errors[best - 1] - 2.0 * errors[best] + errors[best + 1];
    if (curvature > 0.0) {
      offset = std::clamp(0.5 * (errors[best - 1] - errors[best + 1]) / curvature, -0.5, 0.5);
    }
  }
  return {std::max(fine[best] + offset * kStep, 0.01), errors[best]};
}

}  // namespace quire::engine::formats::detail
