#include "quire/engine/vision/gemma3_projector.h"

#include <cmath>
#include <stdexcept>

#include "quire/kernels/cpu/linear.h"

namespace quire::engine::vision {
namespace {

// Mean of each square of kernel x kernel patches, per channel of the tower's
// width; tokens in reading order over the pooled grid.
std::vector<float> average_pool(const Gemma3VisionConfig& config, std::span<const float> tower) {
  const std::int64_t width = config.tower.hidden_size;
  const int patches_per_side = config.tower.patches_per_side();
  const int tokens_per_side = config.tokens_per_side();
  const int kernel = config.pool_kernel();
  std::vector<double> sums(static_cast<std::size_t>(width));
  std::vector<float> pooled(std::size_t(config.tokens_per_image * width));
  for (int tr = 0; tr < tokens_per_side; ++tr) {
    for (int tc = 0; tc < tokens_per_side; ++tc) {
      std::fill(sums.begin(), sums.end(), 0.0);
      for (int i = 0; i < kernel; ++i) {
        for (int j = 0; j < kernel; ++j) {
          const std::int64_t patch =
              std::int64_t(tr * kernel + i) * patches_per_side + tc * kernel + j;
          const float* row = tower.data() + patch * width;
          for (std::int64_t d = 0; d < width; ++d)
            sums[std::size_t(d)] += row[d];
        }
      }
      float* target = pooled.data() + std::int64_t(tr * tokens_per_side + tc) * width;
      for (std::int64_t d = 0; d < width; ++d)
        target[d] = static_cast<float>(sums[std::size_t(d)] / double(kernel * kernel));
    }
  }
  return pooled;
}

// Gemma's RMSNorm: x / sqrt(mean(x^2) + eps) * (1 + w), in place.
void gemma_rms_norm(std::vector<float>& x, std::int64_t width, const std::vector<float>& weight,
                    double eps) {
  const std::int64_t rows = std::int64_t(x.size()) / width;
  for (std::int64_t r = 0; r < rows; ++r) {
    float* row = x.data() + r * width;
    double squares = 0.0;
    for (std::int64_t d = 0; d < width; ++d)
      squares += double(row[d]) * row[d];
    const double inverse = 1.0 / std::sqrt(squares / double(width) + eps);
    for (std::int64_t d = 0; d < width; ++d)
      row[d] = static_cast<float>(row[d] * inverse) * (1.0f + weight[std::size_t(d)]);
  }
}

}  // namespace

std::vector<float> run_gemma3_projector(kernels::ThreadPool& pool, const Gemma3VisionConfig& config,
                                        const Gemma3ProjectorWeights& weights,
                                        std::span<const float> tower_output) {
  const std::int64_t width = config.tower.hidden_size;
  if (tower_output.size() != std::size_t(config.tower.patches() * width)) {
    throw std::invalid_argument(
        "the projector takes the tower's " + std::to_string(config.tower.patches()) + " x " +
        std::to_string(width) + " output, not " + std::to_string(tower_output.size()) + " values");
  }
  std::vector<float> pooled = average_pool(config, tower_output);
  gemma_rms_norm(pooled, width, weights.norm_weight, config.tower.layer_norm_eps);
  std::vector<float> out(std::size_t(config.tokens_per_image) *
                         std::size_t(config.text_hidden_size));
  kernels::linear(pool, pooled.data(), config.tokens_per_image, weights.projection.view(),
                  out.data());
  return out;
}

}  // namespace quire::engine::vision
