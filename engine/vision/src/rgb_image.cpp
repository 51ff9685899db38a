#include "quire/engine/vision/rgb_image.h"

#include <string>

namespace quire::vision {

void check_rgb_image(const RgbImage& image) {
  if (image.width <= 0 || image.height <= 0)
    throw ImageError("the image is empty (" + std::to_string(image.width) + "x" +
                     std::to_string(image.height) + " pixels)");
  const auto expected =
      static_cast<std::size_t>(image.width) * static_cast<std::size_t>(image.height) * 3;
  if (image.rgb.size() != expected)
    throw ImageError("the image's pixel buffer holds " + std::to_string(image.rgb.size()) +
                     " bytes where " + std::to_string(image.width) + "x" +
                     std::to_string(image.height) + " RGB pixels need " + std::to_string(expected));
}

}  // namespace quire::vision
