#pragma once

#include "quire/engine/vision/image_processor.h"

namespace quire::vision {

// The size smart_resize picks: both sides multiples of `factor`, the area
// within [min_pixels, max_pixels], the aspect ratio kept as closely as
// rounding allows. Throws ImageError for an aspect ratio above 200:1.
struct ResizedSize {
  int width = 0;
  int height = 0;
};
ResizedSize qwen_smart_resize(int width, int height, int factor, std::int64_t min_pixels,
                              std::int64_t max_pixels);

// transformers' Qwen2VLImageProcessor (slow, PIL), used by Qwen2-VL,
// Qwen2.5-VL and Qwen3-VL: smart_resize with BICUBIC, rescale, normalize,
// then the image cut into patch_size patches, each repeated
// temporal_patch_size times, ordered merge_size x merge_size block by block:
// pixel_values [grid_t * grid_h * grid_w, 3 * temporal * patch * patch].
// Its tokens: <|vision_start|>, grid_h * grid_w / merge^2 <|image_pad|>,
// <|vision_end|>.
class Qwen2VLImageProcessor final : public ImageProcessor {
 public:
  Qwen2VLImageProcessor(const Qwen2VLOptions& options, ResampleFilter resample,
                        const Normalization& normalization);
  ProcessedImage process(const RgbImage& image) const override;
  ImageTokenLayout token_layout(int width, int height) const override;

 private:
  ResizedSize target_size(int width, int height) const;

  Qwen2VLOptions options_;
  ResampleFilter resample_;
  Normalization normalization_;
};

}  // namespace quire::vision
