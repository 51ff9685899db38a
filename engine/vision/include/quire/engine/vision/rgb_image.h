#pragma once

#include <cstdint>
#include <stdexcept>
#include <vector>

namespace quire::vision {

// An image as the processors take it: 8-bit RGB, row-major, three bytes per
// pixel, no padding between rows. app/images decodes files into it (EXIF
// orientation applied, alpha composited on white); the processors resize and
// normalize it.
struct RgbImage {
  int width = 0;
  int height = 0;
  std::vector<std::uint8_t> rgb;
};

// An image the vision code cannot take: empty, inconsistent, of a size or
// shape a processor refuses. The message says what is wrong with the image.
class ImageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws ImageError unless the image has a positive size and exactly
// width * height * 3 bytes.
void check_rgb_image(const RgbImage& image);

}  // namespace quire::vision
