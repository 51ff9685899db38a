#include "quire/engine/vision/gemma3_image_processor.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace quire::vision {

namespace {

RgbImage crop(const RgbImage& image, int x, int y, int width, int height) {
  // NumPy slicing: a crop reaching past the edge ends at the edge.
  width = std::min(width, image.width - x);
  height = std::min(height, image.height - y);
  RgbImage out;
  out.width = width;
  out.height = height;
  out.rgb.resize(static_cast<std::size_t>(width) * static_cast<std::size_t>(height) * 3);
  const auto row_bytes = static_cast<std::size_t>(width) * 3;
  for (int row = 0; row < height; ++row) {
    const std::size_t from =
        (static_cast<std::size_t>(y + row) * static_cast<std::size_t>(image.width) +
         static_cast<std::size_t>(x)) *
        3;
    std::memcpy(&out.rgb[static_cast<std::size_t>(row) * row_bytes], &image.rgb[from], row_bytes);
  }
  return out;
}

// How many crops along the long side: the aspect ratio rounded half up,
// at most as many as fit the minimum crop size, within [2, max_num_crops].
int crops_along(int long_side, int short_side, const Gemma3Options& options) {
  int n = static_cast<int>(std::floor(static_cast<double>(long_side) / short_side + 0.5));
  n = std::min(static_cast<int>(
                   std::floor(static_cast<double>(long_side) / options.pan_and_scan_min_crop_size)),
               n);
  n = std::max(2, n);
  return std::min(options.pan_and_scan_max_num_crops, n);
}

void add_image_sequence(ImageTokenLayout& layout, const Gemma3Options& options) {
  layout.add("\n\n");
  layout.add(options.boi_token);
  layout.add(options.image_token, static_cast<std::size_t>(options.image_seq_length), true);
  layout.add(options.eoi_token);
  layout.add("\n\n");
}

}  // namespace

Gemma3ImageProcessor::Gemma3ImageProcessor(const Gemma3Options& options, ResampleFilter resample,
                                           const Normalization& normalization)
    : options_(options), resample_(resample), normalization_(normalization) {}

PanAndScanCrops Gemma3ImageProcessor::pan_and_scan(int width, int height) const {
  PanAndScanCrops crops;
  if (!options_.do_pan_and_scan || width <= 0 || height <= 0) return crops;
  int columns = 1;
  int rows = 1;
  if (width >= height) {
    if (static_cast<double>(width) / height < options_.pan_and_scan_min_ratio_to_activate)
      return crops;
    columns = crops_along(width, height, options_);
  } else {
    if (static_cast<double>(height) / width < options_.pan_and_scan_min_ratio_to_activate)
      return crops;
    rows = crops_along(height, width, options_);
  }
  const int crop_width = static_cast<int>(std::ceil(static_cast<double>(width) / columns));
  const int crop_height = static_cast<int>(std::ceil(static_cast<double>(height) / rows));
  if (std::min(crop_width, crop_height) < options_.pan_and_scan_min_crop_size) return crops;
  crops.crop_width = crop_width;
  crops.crop_height = crop_height;
  for (int i = 0; i < columns; ++i)
    crops.x_offsets.push_back(crop_width * i);
  for (int i = 0; i < rows; ++i)
    crops.y_offsets.push_back(crop_height * i);
  return crops;
}

ProcessedImage Gemma3ImageProcessor::process(const RgbImage& image) const {
  check_rgb_image(image);
  std::vector<RgbImage> sources;
  sources.push_back(image);
  const PanAndScanCrops crops = pan_and_scan(image.width, image.height);
  for (int y : crops.y_offsets)
    for (int x : crops.x_offsets)
      sources.push_back(crop(image, x, y, crops.crop_width, crops.crop_height));

  ProcessedImage out;
  out.num_crops = crops.count();
  out.shape = {sources.size(), 3, static_cast<std::size_t>(options_.height),
               static_cast<std::size_t>(options_.width)};
  out.pixel_values.reserve(sources.size() * 3 * static_cast<std::size_t>(options_.height) *
                           static_cast<std::size_t>(options_.width));
  for (const RgbImage& source : sources) {
    out.resized.push_back(resize_like_pil(source, options_.width, options_.height, resample_));
    append_chw(out.resized.back(), normalization_, out.pixel_values);
  }
  out.tokens = token_layout(image.width, image.height);
  return out;
}

ImageTokenLayout Gemma3ImageProcessor::token_layout(int width, int height) const {
  ImageTokenLayout layout;
  const int num_crops = pan_and_scan(width, height).count();
  if (num_crops == 0) {
    add_image_sequence(layout, options_);
    return layout;
  }
  layout.add("Here is the original image ");
  add_image_sequence(layout, options_);
  layout.add(" and here are some crops to help you see better ");
  for (int i = 0; i < num_crops; ++i) {
    if (i > 0) layout.add(" ");
    add_image_sequence(layout, options_);
  }
  return layout;
}

}  // namespace quire::vision
