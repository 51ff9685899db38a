#pragma once

#include <array>
#include <vector>

#include "quire/engine/vision/rgb_image.h"

namespace quire::vision {

// transformers' rescale and normalize steps of the slow (NumPy) image
// processors: rescale multiplies in double precision and stores float32;
// normalize subtracts the mean and divides by the standard deviation in
// float32, the mean and deviation rounded to float32 first.
struct Normalization {
  bool do_rescale = true;
  double rescale_factor = 1.0 / 255.0;
  bool do_normalize = true;
  std::array<double, 3> mean{0.5, 0.5, 0.5};
  std::array<double, 3> deviation{0.5, 0.5, 0.5};  // image_std

  // One channel value of one pixel, as the processors compute it.
  float apply(std::uint8_t value, int channel) const;
};

// The image as channel-first floats [3, height, width], appended to `out`.
void append_chw(const RgbImage& image, const Normalization& normalization, std::vector<float>& out);

}  // namespace quire::vision
