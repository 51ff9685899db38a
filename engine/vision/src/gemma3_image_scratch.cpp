#include "quire/engine/vision/gemma3_image_scratch.h"

#include <algorithm>

namespace quire::engine::vision {

std::int64_t gemma3_image_scratch_bytes(const Gemma3VisionConfig& config) {
  const SiglipConfig& c = config.tower;
  const std::int64_t pixels = std::int64_t{c.num_channels} * c.image_size * c.image_size;
  const std::int64_t patches = c.patches();
  const std::int64_t width = c.hidden_size;
  const std::int64_t inner = c.intermediate_size;
  const std::int64_t head_dim = c.head_dim();
  const std::int64_t tokens = config.tokens_per_image;
  const std::int64_t text_width = config.text_hidden_size;

  const std::int64_t patch_embedding =
      pixels + std::int64_t{c.num_channels} * c.patch_size * c.patch_size * patches +
      patches * width;
  const std::int64_t tower_end =
      pixels + 8 * patches * width + patches * inner + 4 * patches * head_dim + patches * patches;
  const std::int64_t projector =
      pixels + patches * width + tokens * width + std::max(2 * width, tokens * text_width);
  constexpr std::int64_t kFloat = 4;
  return kFloat * std::max({patch_embedding, tower_end, projector});
}

}  // namespace quire::engine::vision
