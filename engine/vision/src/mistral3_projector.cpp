#include "quire/engine/vision/mistral3_projector.h"

#include <stdexcept>
#include <string>

#include "pixtral_ops.h"
#include "quire/kernels/cpu/linear.h"
#include "vision_ops.h"

namespace quire::engine::vision {
namespace {

// torch.nn.functional.unfold of the [hidden, grid_h, grid_w] grid with
// kernel = stride = merge, transposed: one row per square (reading order),
// value (channel, i, j) at channel * merge^2 + i * merge + j.
std::vector<float> unfold_squares(std::span<const float> normed, std::int64_t width, int grid_h,
                                  int grid_w, int merge) {
  const int rows = grid_h / merge;
  const int columns = grid_w / merge;
  const std::int64_t square = std::int64_t(merge) * merge;
  std::vector<float> merged(std::size_t(std::int64_t(rows) * columns * width * square));
  for (int sr = 0; sr < rows; ++sr) {
    for (int sc = 0; sc < columns; ++sc) {
      float* target = merged.data() + (std::int64_t(sr) * columns + sc) * width * square;
      for (int i = 0; i < merge; ++i) {
        for (int j = 0; j < merge; ++j) {
          const std::int64_t patch = std::int64_t(sr * merge + i) * grid_w + sc * merge + j;
          const float* source = normed.data() + patch * width;
          const std::int64_t offset = std::int64_t(i) * merge + j;
          for (std::int64_t ch = 0; ch < width; ++ch)
            target[ch * square + offset] = source[ch];
        }
      }
    }
  }
  return merged;
}

std::vector<float> apply_linear(kernels::ThreadPool& pool, const DenseLinear& linear,
                                const std::vector<float>& x, std::int64_t rows) {
  std::vector<float> out(std::size_t(rows * linear.out_features));
  kernels::linear(pool, x.data(), rows, linear.view(), out.data());
  return out;
}

}  // namespace

std::vector<float> run_mistral3_projector(kernels::ThreadPool& pool,
                                          const Mistral3VisionConfig& config,
                                          const Mistral3ProjectorWeights& weights,
                                          std::span<const float> tower_output, int grid_height,
                                          int grid_width) {
  const std::int64_t width = config.tower.hidden_size;
  const int merge = config.spatial_merge_size;
  const std::int64_t patches = std::int64_t(grid_height) * grid_width;
  if (grid_height <= 0 || grid_width <= 0 || grid_height % merge != 0 || grid_width % merge != 0 ||
      tower_output.size() != std::size_t(patches * width)) {
    throw std::invalid_argument(
        "the Mistral 3 projector takes the tower's output for a patch grid whose sides are "
        "multiples of spatial_merge_size (" +
        std::to_string(merge) + "), " + std::to_string(width) + " values a patch; not " +
        std::to_string(tower_output.size()) + " values for a " + std::to_string(grid_height) +
        " x " + std::to_string(grid_width) + " grid");
  }
  std::vector<float> normed(tower_output.size());
  detail::rms_norm_rows(pool, tower_output.data(), patches, width, weights.norm,
                        config.text_rms_norm_eps, normed.data());
  const std::int64_t tokens = patches / (std::int64_t(merge) * merge);
  const std::vector<float> squares = unfold_squares(normed, width, grid_height, grid_width, merge);
  const std::vector<float> merged = apply_linear(pool, weights.merging_layer, squares, tokens);
  std::vector<float> inner = apply_linear(pool, weights.linear_1, merged, tokens);
  detail::gelu_in_place(pool, inner, config.projector_activation);
  return apply_linear(pool, weights.linear_2, inner, tokens);
}

}  // namespace quire::engine::vision
