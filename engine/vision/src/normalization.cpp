#include "quire/engine/vision/normalization.h"

namespace quire::vision {

float Normalization::apply(std::uint8_t value, int channel) const {
  // NumPy's order of operations in transformers' rescale() and normalize():
  // the product in double, stored as float32; the rest in float32.
  float x = do_rescale ? static_cast<float>(static_cast<double>(value) * rescale_factor)
                       : static_cast<float>(value);
  if (do_normalize) {
    const auto m = static_cast<float>(mean[static_cast<std::size_t>(channel)]);
    const auto s = static_cast<float>(deviation[static_cast<std::size_t>(channel)]);
    x = (x - m) / s;
  }
  return x;
}

void append_chw(const RgbImage& image, const Normalization& normalization,
                std::vector<float>& out) {
  check_rgb_image(image);
  const auto pixels =
      static_cast<std::size_t>(image.width) * static_cast<std::size_t>(image.height);
  const std::size_t base = out.size();
  out.resize(base + pixels * 3);
  for (int channel = 0; channel < 3; ++channel) {
    // A table per channel: 256 values, computed once, exactly as per pixel.
    float table[256];
    for (int v = 0; v < 256; ++v)
      table[v] = normalization.apply(static_cast<std::uint8_t>(v), channel);
    float* plane = &out[base + static_cast<std::size_t>(channel) * pixels];
    for (std::size_t i = 0; i < pixels; ++i)
      plane[i] = table[image.rgb[i * 3 + static_cast<std::size_t>(channel)]];
  }
}

}  // namespace quire::vision
