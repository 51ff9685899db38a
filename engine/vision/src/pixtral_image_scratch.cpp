#include "quire/engine/vision/pixtral_image_scratch.h"

#include <algorithm>

namespace quire::engine::vision {

std::int64_t pixtral_largest_image_patches(const Mistral3VisionConfig& config) {
  const std::int64_t token = config.token_pixels();
  const std::int64_t side =
      (config.tower.image_size + token - 1) / token * config.spatial_merge_size;
  return side * side;
}

std::int64_t pixtral_image_scratch_bytes(const Mistral3VisionConfig& config, std::int64_t patches) {
  const PixtralConfig& c = config.tower;
  const std::int64_t rows = patches;
  const std::int64_t values = c.patch_values();
  const std::int64_t width = c.hidden_size;
  const std::int64_t inner = c.intermediate_size;
  const std::int64_t head_dim = c.head_dim();
  const std::int64_t tokens =
      rows / (std::int64_t{config.spatial_merge_size} * config.spatial_merge_size);
  const std::int64_t text = config.text_hidden_size;

  const std::int64_t patch_embedding = 2 * rows * values + rows * width;
  const std::int64_t layer =
      rows * values + 8 * rows * width + 6 * rows * head_dim + rows * rows + 2 * rows * inner;
  const std::int64_t projector =
      rows * values + 3 * rows * width + tokens * width + 2 * tokens * text;
  constexpr std::int64_t kFloat = 4;
  return kFloat * std::max({patch_embedding, layer, projector});
}

}  // namespace quire::engine::vision
