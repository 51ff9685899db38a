#pragma once

#include <string>

#include "quire/engine/vision/rgb_image.h"

namespace quire::vision {

// The resampling filters of PIL's Image.resize, numbered as PIL numbers them
// (and as preprocessor_config.json's "resample" names them). NEAREST (0) is
// a different algorithm in PIL and is not offered.
enum class ResampleFilter { Lanczos = 1, Bilinear = 2, Bicubic = 3, Box = 4, Hamming = 5 };

// The filter PIL numbers `code`; throws ImageError naming the supported
// numbers for any other.
ResampleFilter resample_filter_from_pil(int code);
std::string resample_filter_name(ResampleFilter filter);

// Resizes exactly as PIL's Image.resize does an "RGB" image (libImaging's
// Resample.c): a separable, antialiased convolution whose support grows with
// the downscale factor, the horizontal pass first, each pass with
// coefficients in 22-bit fixed point and its result rounded and clipped to
// 8 bits. The same size in both directions returns a copy, as PIL does.
// Throws ImageError for an invalid image or a target size below 1x1.
RgbImage resize_like_pil(const RgbImage& image, int width, int height, ResampleFilter filter);

}  // namespace quire::vision
