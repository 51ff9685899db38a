// Gemma 3's images in a chat, as Gemma3Processor lays them out: the chat
// template writes <start_of_image>, which becomes "\n\n<start_of_image>",
// mm_tokens_per_image <image_soft_token> and "<end_of_image>\n\n"; with pan
// and scan, the image and then each crop is such a run. An image's
// positions attend to each other in both directions.

#include <string>
#include <variant>

#include "family_image_prompts.h"
#include "quire/engine/model_error.h"
#include "quire/engine/vision/gemma3_vision_config.h"
#include "quire/engine/vision/gemma3_vision_encoder.h"
#include "quire/engine/vision/image_processor.h"
#include "quire/engine/vision/processor_config.h"

namespace quire::engine::detail {
namespace {

using Gemma3Tower = LazyTower<vision::Gemma3VisionEncoder>;

class Gemma3ImagePrompts final
    : public ProcessorAndTower<quire::vision::Gemma3Options, vision::Gemma3VisionEncoder> {
 public:
  using ProcessorAndTower::ProcessorAndTower;

  std::shared_ptr<const PreparedImage> prepare(const quire::vision::RgbImage& image) override {
    const quire::vision::ProcessedImage processed = processor_->process(image);
    auto prepared = std::make_shared<PreparedImage>();
    prepared->marker = options_.boi_token;
    prepared->text = processed.tokens.text();
    prepared->position_text = options_.image_token;
    // [1 + crops, channels, height, width]: the image, then its crops, each
    // one run of positions in the layout's order.
    const auto& shape = processed.shape;
    const int channels = static_cast<int>(shape[1]);
    const int height = static_cast<int>(shape[2]);
    const int width = static_cast<int>(shape[3]);
    const std::size_t plane = std::size_t(channels) * std::size_t(height) * std::size_t(width);
    for (std::size_t crop = 0; crop < shape[0]; ++crop) {
      auto values = std::make_shared<const std::vector<float>>(
          processed.pixel_values.begin() + std::ptrdiff_t(crop * plane),
          processed.pixel_values.begin() + std::ptrdiff_t((crop + 1) * plane));
      auto run = std::make_shared<PromptImage>();
      run->digest = tower_input_digest({channels, height, width}, *values);
      run->positions = options_.image_seq_length;
      run->both_ways = true;  // Gemma 3: an image's positions see each other
      run->embed = [tower = tower_, values, channels, height, width] {
        return tower->embed(vision::PixelTensor{*values, channels, height, width});
      };
      prepared->runs.push_back(std::move(run));
    }
    return prepared;
  }
};

}  // namespace

std::unique_ptr<FamilyImagePrompts> open_gemma3_image_prompts(
    const std::filesystem::path& directory, std::shared_ptr<kernels::ThreadPool> pool) {
  const std::optional<vision::Gemma3VisionConfig> gemma =
      vision::read_gemma3_vision_config(directory);
  if (!gemma) return nullptr;
  quire::vision::ProcessorConfig config = quire::vision::read_processor_config(directory);
  const auto* options = std::get_if<quire::vision::Gemma3Options>(&config.family);
  if (options == nullptr) {
    throw ModelError("the image processor of " + directory.string() + " (" +
                     config.image_processor_type +
                     ") is not Gemma 3's, which its config.json "
                     "describes");
  }
  if (options->image_seq_length != gemma->tokens_per_image) {
    throw ModelError("the image processor of " + directory.string() + " writes " +
                     std::to_string(options->image_seq_length) +
                     " tokens per image (image_seq_length) where config.json's "
                     "mm_tokens_per_image says " +
                     std::to_string(gemma->tokens_per_image));
  }
  if (options->height != gemma->tower.image_size || options->width != gemma->tower.image_size) {
    throw ModelError("the image processor of " + directory.string() + " makes " +
                     std::to_string(options->width) + " x " + std::to_string(options->height) +
                     " images where the vision tower takes " +
                     std::to_string(gemma->tower.image_size) + " x " +
                     std::to_string(gemma->tower.image_size));
  }
  return std::make_unique<Gemma3ImagePrompts>(
      std::move(config), std::make_shared<Gemma3Tower>(directory, std::move(pool)));
}

}  // namespace quire::engine::detail
