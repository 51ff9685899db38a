#include "quire/engine/vision/qwen25_image_scratch.h"

#include <algorithm>

namespace quire::engine::vision {

std::int64_t qwen25_largest_image_patches(const Qwen25VisionConfig& config,
                                          std::int64_t max_pixels) {
  const std::int64_t unit = config.merge_unit();
  const std::int64_t patch_pixels = std::int64_t{config.patch_size} * config.patch_size;
  return std::max<std::int64_t>(max_pixels / (patch_pixels * unit), 1) * unit;
}

std::int64_t qwen25_image_scratch_bytes(const Qwen25VisionConfig& config, std::int64_t patches) {
  const std::int64_t rows = patches;
  const std::int64_t values = config.patch_values();
  const std::int64_t width = config.hidden_size;
  const std::int64_t inner = config.intermediate_size;
  const std::int64_t head_dim = config.head_dim();
  const std::int64_t unit = config.merge_unit();
  const std::int64_t tokens = rows / unit;
  const std::int64_t out = config.out_hidden_size;
  const std::int64_t block = std::min(rows, kQwenQueryBlock);
  const std::int64_t floats = 2 * rows * values + 2 * rows + 2 * rows * head_dim +
                              7 * rows * width + 2 * rows * inner + 4 * rows * head_dim +
                              block * rows + 2 * tokens + tokens * unit * width + 2 * tokens * out;
  constexpr std::int64_t kFloat = 4;
  return kFloat * floats;
}

}  // namespace quire::engine::vision
