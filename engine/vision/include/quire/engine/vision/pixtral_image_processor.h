#pragma once

#include "quire/engine/vision/image_processor.h"
#include "quire/engine/vision/qwen2vl_image_processor.h"

namespace quire::vision {

// The size Pixtral's processor resizes to: scaled down (never up) so that
// it fits max_width x max_height, each side floored, then rounded up to
// whole patches. Throws ImageError when a side would shrink to nothing.
ResizedSize pixtral_resize_size(int width, int height, const PixtralOptions& options);

// transformers' PixtralImageProcessor (slow, PIL), used by Pixtral and
// Mistral Small 3.x: resize as above with BICUBIC, rescale, normalize,
// channel first [3, H, W]. Its tokens: a row of [IMG] per row of patches,
// each ended by [IMG_BREAK], the last by [IMG_END].
class PixtralImageProcessor final : public ImageProcessor {
 public:
  PixtralImageProcessor(const PixtralOptions& options, ResampleFilter resample,
                        const Normalization& normalization);
  ProcessedImage process(const RgbImage& image) const override;
  ImageTokenLayout token_layout(int width, int height) const override;

 private:
  PixtralOptions options_;
  ResampleFilter resample_;
  Normalization normalization_;
};

}  // namespace quire::vision
