#include "quire/engine/vision/image_processor.h"

#include "quire/engine/vision/gemma3_image_processor.h"
#include "quire/engine/vision/pixtral_image_processor.h"
#include "quire/engine/vision/qwen2vl_image_processor.h"

namespace quire::vision {

std::unique_ptr<ImageProcessor> make_image_processor(const ProcessorConfig& config) {
  if (const auto* gemma = std::get_if<Gemma3Options>(&config.family))
    return std::make_unique<Gemma3ImageProcessor>(*gemma, config.resample, config.normalization);
  if (const auto* qwen = std::get_if<Qwen2VLOptions>(&config.family))
    return std::make_unique<Qwen2VLImageProcessor>(*qwen, config.resample, config.normalization);
  return std::make_unique<PixtralImageProcessor>(std::get<PixtralOptions>(config.family),
                                                 config.resample, config.normalization);
}

}  // namespace quire::vision
