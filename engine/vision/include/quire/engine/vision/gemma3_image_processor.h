#pragma once

#include <vector>

#include "quire/engine/vision/image_processor.h"

namespace quire::vision {

// Where pan and scan cuts an image: crops of crop_width x crop_height at
// these offsets, row by row; the last row and column may be smaller (they
// end at the image's edge, as NumPy's slices do).
struct PanAndScanCrops {
  int crop_width = 0;
  int crop_height = 0;
  std::vector<int> x_offsets;
  std::vector<int> y_offsets;
  int count() const { return static_cast<int>(x_offsets.size() * y_offsets.size()); }
};

// transformers' Gemma3ImageProcessor (the slow one, which resizes with PIL):
// the image, and with pan and scan its crops, each resized to a fixed size
// with the configured filter (BILINEAR in the published configs), rescaled,
// normalized, channel first. Its tokens: "\n\n<start_of_image>", the soft
// tokens, "<end_of_image>\n\n", once per image and crop, with the
// processor's sentence around the crops.
class Gemma3ImageProcessor final : public ImageProcessor {
 public:
  Gemma3ImageProcessor(const Gemma3Options& options, ResampleFilter resample,
                       const Normalization& normalization);
  ProcessedImage process(const RgbImage& image) const override;
  ImageTokenLayout token_layout(int width, int height) const override;
  // The crops pan and scan takes of an image of this size; none when it is
  // off, the image is close enough to square, or the crops would be smaller
  // than the minimum crop size.
  PanAndScanCrops pan_and_scan(int width, int height) const;

 private:
  Gemma3Options options_;
  ResampleFilter resample_;
  Normalization normalization_;
};

}  // namespace quire::vision
