#include "quire/engine/vision/qwen2vl_image_processor.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace quire::vision {

ResizedSize qwen_smart_resize(int width, int height, int factor, std::int64_t min_pixels,
                              std::int64_t max_pixels) {
  if (width <= 0 || height <= 0)
    throw ImageError("the image is empty (" + std::to_string(width) + "x" + std::to_string(height) +
                     " pixels)");
  const double ratio = static_cast<double>(std::max(width, height)) / std::min(width, height);
  if (ratio > 200)
    throw ImageError("the image is " + std::to_string(width) + "x" + std::to_string(height) +
                     " pixels, an aspect ratio above 200:1, which Qwen's vision models refuse; "
                     "crop it closer to square");
  // Python's round() rounds halves to even, as nearbyint does by default.
  auto h_bar =
      static_cast<std::int64_t>(std::nearbyint(static_cast<double>(height) / factor)) * factor;
  auto w_bar =
      static_cast<std::int64_t>(std::nearbyint(static_cast<double>(width) / factor)) * factor;
  const double area = static_cast<double>(height) * static_cast<double>(width);
  if (h_bar * w_bar > max_pixels) {
    const double beta = std::sqrt(area / static_cast<double>(max_pixels));
    h_bar = std::max<std::int64_t>(
        factor, static_cast<std::int64_t>(std::floor(height / beta / factor)) * factor);
    w_bar = std::max<std::int64_t>(
        factor, static_cast<std::int64_t>(std::floor(width / beta / factor)) * factor);
  } else if (h_bar * w_bar < min_pixels) {
    const double beta = std::sqrt(static_cast<double>(min_pixels) / area);
    h_bar = static_cast<std::int64_t>(std::ceil(height * beta / factor)) * factor;
    w_bar = static_cast<std::int64_t>(std::ceil(width * beta / factor)) * factor;
  }
  if (h_bar <= 0 || w_bar <= 0 || h_bar > (1 << 20) || w_bar > (1 << 20))
    throw ImageError("the image's size " + std::to_string(width) + "x" + std::to_string(height) +
                     " gives no usable resized size within the model's pixel limits");
  return {static_cast<int>(w_bar), static_cast<int>(h_bar)};
}

Qwen2VLImageProcessor::Qwen2VLImageProcessor(const Qwen2VLOptions& options, ResampleFilter resample,
                                             const Normalization& normalization)
    : options_(options), resample_(resample), normalization_(normalization) {}

ResizedSize Qwen2VLImageProcessor::target_size(int width, int height) const {
  return qwen_smart_resize(width, height, options_.patch_size * options_.merge_size,
                           options_.min_pixels, options_.max_pixels);
}

ProcessedImage Qwen2VLImageProcessor::process(const RgbImage& image) const {
  check_rgb_image(image);
  const ResizedSize size = target_size(image.width, image.height);
  ProcessedImage out;
  out.resized.push_back(resize_like_pil(image, size.width, size.height, resample_));
  std::vector<float> chw;
  append_chw(out.resized.front(), normalization_, chw);

  const int patch = options_.patch_size;
  const int merge = options_.merge_size;
  const int temporal = options_.temporal_patch_size;
  const int grid_h = size.height / patch;
  const int grid_w = size.width / patch;
  out.grid_thw = {1, grid_h, grid_w};
  const auto row_length = static_cast<std::size_t>(3 * temporal * patch * patch);
  const auto rows = static_cast<std::size_t>(grid_h) * static_cast<std::size_t>(grid_w);
  out.shape = {rows, row_length};
  out.pixel_values.resize(rows * row_length);
  const auto plane = static_cast<std::size_t>(size.width) * static_cast<std::size_t>(size.height);

  // Rows go block of merge x merge patches by block, patches row-major inside
  // a block; a row holds channel, then time (the same image each step), then
  // the patch's pixels row-major.
  std::size_t row = 0;
  for (int block_y = 0; block_y < grid_h / merge; ++block_y)
    for (int block_x = 0; block_x < grid_w / merge; ++block_x)
      for (int in_y = 0; in_y < merge; ++in_y)
        for (int in_x = 0; in_x < merge; ++in_x, ++row) {
          const int top = (block_y * merge + in_y) * patch;
          const int left = (block_x * merge + in_x) * patch;
          float* dst = &out.pixel_values[row * row_length];
          for (int c = 0; c < 3; ++c)
            for (int t = 0; t < temporal; ++t)
              for (int py = 0; py < patch; ++py)
                for (int px = 0; px < patch; ++px)
                  *dst++ = chw[static_cast<std::size_t>(c) * plane +
                               static_cast<std::size_t>(top + py) *
                                   static_cast<std::size_t>(size.width) +
                               static_cast<std::size_t>(left + px)];
        }
  out.tokens = token_layout(image.width, image.height);
  return out;
}

ImageTokenLayout Qwen2VLImageProcessor::token_layout(int width, int height) const {
  const ResizedSize size = target_size(width, height);
  const auto grid = static_cast<std::size_t>(size.height / options_.patch_size) *
                    static_cast<std::size_t>(size.width / options_.patch_size);
  const auto merged = grid / static_cast<std::size_t>(options_.merge_size * options_.merge_size);
  ImageTokenLayout layout;
  layout.add(options_.vision_start_token);
  layout.add(options_.image_token, merged, true);
  layout.add(options_.vision_end_token);
  return layout;
}

}  // namespace quire::vision
