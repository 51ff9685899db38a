#include "quire/engine/vision/pixtral_image_processor.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace quire::vision {

ResizedSize pixtral_resize_size(int width, int height, const PixtralOptions& options) {
  if (width <= 0 || height <= 0)
    throw ImageError("the image is empty (" + std::to_string(width) + "x" + std::to_string(height) +
                     " pixels)");
  const double ratio = std::max(static_cast<double>(height) / options.max_height,
                                static_cast<double>(width) / options.max_width);
  long long h = height;
  long long w = width;
  if (ratio > 1) {
    // transformers floors here (Mistral's own code rounds), so that the
    // result never exceeds the longest edge.
    h = static_cast<long long>(std::floor(height / ratio));
    w = static_cast<long long>(std::floor(width / ratio));
  }
  if (h < 1 || w < 1)
    throw ImageError("the image is " + std::to_string(width) + "x" + std::to_string(height) +
                     " pixels: fitted within " + std::to_string(options.max_width) + "x" +
                     std::to_string(options.max_height) +
                     " one side shrinks to nothing; crop it closer to square");
  const long long rows = (h - 1) / options.patch_height + 1;
  const long long columns = (w - 1) / options.patch_width + 1;
  return {static_cast<int>(columns * options.patch_width),
          static_cast<int>(rows * options.patch_height)};
}

PixtralImageProcessor::PixtralImageProcessor(const PixtralOptions& options, ResampleFilter resample,
                                             const Normalization& normalization)
    : options_(options), resample_(resample), normalization_(normalization) {}

ProcessedImage PixtralImageProcessor::process(const RgbImage& image) const {
  check_rgb_image(image);
  const ResizedSize size = pixtral_resize_size(image.width, image.height, options_);
  ProcessedImage out;
  out.resized.push_back(resize_like_pil(image, size.width, size.height, resample_));
  out.shape = {3, static_cast<std::size_t>(size.height), static_cast<std::size_t>(size.width)};
  append_chw(out.resized.front(), normalization_, out.pixel_values);
  out.tokens = token_layout(image.width, image.height);
  return out;
}

ImageTokenLayout PixtralImageProcessor::token_layout(int width, int height) const {
  const ResizedSize size = pixtral_resize_size(width, height, options_);
  const int rows = size.height / options_.patch_height;
  const auto columns = static_cast<std::size_t>(size.width / options_.patch_width);
  ImageTokenLayout layout;
  for (int row = 0; row < rows; ++row) {
    layout.add(options_.image_token, columns, true);
    layout.add(row + 1 < rows ? options_.image_break_token : options_.image_end_token);
  }
  return layout;
}

}  // namespace quire::vision
