#include "family_image_prompts.h"

#include <cstring>

namespace quire::engine::detail {

ImageDigest tower_input_digest(std::array<std::int32_t, 3> shape, std::span<const float> values) {
  std::vector<std::uint8_t> bytes(sizeof(shape) + values.size_bytes());
  std::memcpy(bytes.data(), shape.data(), sizeof(shape));
  std::memcpy(bytes.data() + sizeof(shape), values.data(), values.size_bytes());
  return image_digest(bytes);
}

}  // namespace quire::engine::detail
