// Qwen2.5-VL's images in a chat, as Qwen2_5_VLProcessor lays them out: the
// chat template writes "<|vision_start|><|image_pad|><|vision_end|>" for an
// image, and the processor repeats "<|image_pad|>" once per merged token,
// grid_t * grid_h * grid_w / merge_size^2 times. Those positions take the
// tower and patch merger's rows, attend causally like text, and carry their
// merged grid for the language model's M-RoPE positions.

#include <string>
#include <variant>

#include "family_image_prompts.h"
#include "quire/engine/model_error.h"
#include "quire/engine/vision/image_processor.h"
#include "quire/engine/vision/processor_config.h"
#include "quire/engine/vision/qwen25_vision_config.h"
#include "quire/engine/vision/qwen25_vision_encoder.h"

namespace quire::engine::detail {
namespace {

using Qwen25Tower = LazyTower<vision::Qwen25VisionEncoder>;

void check_same(const std::filesystem::path& directory, const char* processor_key,
                int processor_value, const char* tower_key, int tower_value) {
  if (processor_value == tower_value) return;
  throw ModelError("the image processor of " + directory.string() + " has " + processor_key + " " +
                   std::to_string(processor_value) + " where config.json's vision_config." +
                   tower_key + " says " + std::to_string(tower_value) +
                   "; the two files must describe the same tower");
}

class Qwen25ImagePrompts final
    : public ProcessorAndTower<quire::vision::Qwen2VLOptions, vision::Qwen25VisionEncoder> {
 public:
  using ProcessorAndTower::ProcessorAndTower;

  std::shared_ptr<const PreparedImage> prepare(const quire::vision::RgbImage& image) override {
    const quire::vision::ProcessedImage processed = processor_->process(image);
    auto prepared = std::make_shared<PreparedImage>();
    // What Qwen2.5-VL's chat template writes for an image part; the
    // processor's text repeats the pad once per merged token.
    prepared->marker =
        options_.vision_start_token + options_.image_token + options_.vision_end_token;
    prepared->text = processed.tokens.text();
    prepared->position_text = options_.image_token;
    const std::array<int, 3> grid = processed.grid_thw;
    auto values = std::make_shared<const std::vector<float>>(processed.pixel_values);
    auto run = std::make_shared<PromptImage>();
    // The digest covers the patch grid (t, h, w), then the patches.
    run->digest = tower_input_digest({grid[0], grid[1], grid[2]}, *values);
    run->grid_t = grid[0];
    run->grid_h = grid[1] / options_.merge_size;
    run->grid_w = grid[2] / options_.merge_size;
    run->positions = run->grid_t * run->grid_h * run->grid_w;
    run->both_ways = false;  // Qwen2.5-VL attends causally over an image
    run->embed = [tower = tower_, values, grid] {
      return tower->embed(std::span<const float>(*values), grid);
    };
    prepared->runs.push_back(std::move(run));
    return prepared;
  }
};

}  // namespace

std::unique_ptr<FamilyImagePrompts> open_qwen25_image_prompts(
    const std::filesystem::path& directory, std::shared_ptr<kernels::ThreadPool> pool) {
  const std::optional<vision::Qwen25VisionConfig> tower =
      vision::read_qwen25_vision_config(directory);
  if (!tower) return nullptr;
  quire::vision::ProcessorConfig config = quire::vision::read_processor_config(directory);
  const auto* options = std::get_if<quire::vision::Qwen2VLOptions>(&config.family);
  if (options == nullptr) {
    throw ModelError("the image processor of " + directory.string() + " (" +
                     config.image_processor_type +
                     ") is not Qwen2-VL's, which Qwen2.5-VL's config.json describes");
  }
  check_same(directory, "patch_size", options->patch_size, "patch_size", tower->patch_size);
  check_same(directory, "merge_size", options->merge_size, "spatial_merge_size",
             tower->spatial_merge_size);
  check_same(directory, "temporal_patch_size", options->temporal_patch_size, "temporal_patch_size",
             tower->temporal_patch_size);
  return std::make_unique<Qwen25ImagePrompts>(
      std::move(config), std::make_shared<Qwen25Tower>(directory, std::move(pool)));
}

}  // namespace quire::engine::detail
