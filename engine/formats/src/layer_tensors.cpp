#include "quire/engine/formats/layer_tensors.h"

namespace quire::engine::formats {

std::int64_t TensorView::elements() const {
  std::int64_t count = 1;
  for (const std::int64_t dim : shape)
    count *= dim;
  return count;
}

std::string format_shape(std::span<const std::int64_t> shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(shape[i]);
  }
  return text + "]";
}

}  // namespace quire::engine::formats
