#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <vector>

#include "quire/engine/vision/image_token_layout.h"
#include "quire/engine/vision/processor_config.h"
#include "quire/engine/vision/rgb_image.h"

namespace quire::vision {

// One image prepared for a vision tower.
struct ProcessedImage {
  // The 8-bit images after resizing, before rescaling: the image, and for
  // Gemma 3's pan and scan its crops after it.
  std::vector<RgbImage> resized;
  // The tower's input: Gemma 3 [1 + crops, 3, H, W]; Qwen
  // [grid_t * grid_h * grid_w, 3 * temporal * patch * patch]; Pixtral
  // [3, H, W].
  std::vector<std::size_t> shape;
  std::vector<float> pixel_values;
  // Qwen's (t, h, w) grid of patches; zeros for the other families.
  std::array<int, 3> grid_thw{0, 0, 0};
  // Gemma 3's pan-and-scan crops (0 when off or when the image needs none).
  int num_crops = 0;
  ImageTokenLayout tokens;
};

// The preprocessing of one processor family, configured from a model's
// preprocessor_config.json. Implementations are stateless after
// construction and may be used from several threads.
class ImageProcessor {
 public:
  virtual ~ImageProcessor() = default;
  // Throws ImageError for an image the processor refuses.
  virtual ProcessedImage process(const RgbImage& image) const = 0;
  // The token layout an image of this size gets, without processing it.
  virtual ImageTokenLayout token_layout(int width, int height) const = 0;
};

std::unique_ptr<ImageProcessor> make_image_processor(const ProcessorConfig& config);

}  // namespace quire::vision
