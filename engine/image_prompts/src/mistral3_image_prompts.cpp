// Mistral Small 3.x's images in a chat (Mistral3ForConditionalGeneration).
// PixtralProcessor writes an image as rows of [IMG], each row ended by
// [IMG_BREAK] and the last by [IMG_END] instead; only the [IMG] positions
// take the tower's rows, and attention over them is causal. Each row is one run of positions (a
// PromptImage with its own digest, derived from the image's and the row's index), and every row's
// embed() takes its slice of one tower output, computed once for the image.

#include <algorithm>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "family_image_prompts.h"
#include "quire/engine/model_error.h"
#include "quire/engine/vision/image_processor.h"
#include "quire/engine/vision/pixtral_vision_config.h"
#include "quire/engine/vision/pixtral_vision_encoder.h"
#include "quire/engine/vision/processor_config.h"

namespace quire::engine::detail {

namespace {

using PixtralTower = LazyTower<vision::PixtralVisionEncoder>;

// One image's tower output, shared by its rows: the first row a job needs
// runs the tower, the others take their slices of the same output. Once
// every row has taken its slice the output is let go (a later job that
// needs the image again, its pages evicted, runs the tower again).
struct SharedRows {
  std::shared_ptr<PixtralTower> tower;
  std::vector<float> pixels;
  int height = 0;
  int width = 0;
  int rows = 0;
  int columns = 0;

  std::mutex mutex;
  std::vector<float> output;
  std::vector<bool> taken;

  std::vector<float> row(int index) {
    const std::lock_guard lock(mutex);
    if (output.empty()) {
      std::vector<float> values = tower->embed(vision::PixelTensor{pixels, 3, height, width});
      const std::size_t tokens = std::size_t(rows) * std::size_t(columns);
      if (values.empty() || values.size() % tokens != 0) {
        throw std::runtime_error("the vision tower gave " + std::to_string(values.size()) +
                                 " values for an image of " + std::to_string(tokens) + " tokens");
      }
      output = std::move(values);
      taken.assign(std::size_t(rows), false);
    }
    const std::size_t hidden = output.size() / (std::size_t(rows) * std::size_t(columns));
    const std::size_t begin = std::size_t(index) * std::size_t(columns) * hidden;
    std::vector<float> slice(
        output.begin() + std::ptrdiff_t(begin),
        output.begin() + std::ptrdiff_t(begin + std::size_t(columns) * hidden));
    taken[std::size_t(index)] = true;
    if (std::all_of(taken.begin(), taken.end(), [](bool t) { return t; })) {
      output.clear();
      output.shrink_to_fit();
    }
    return slice;
  }
};

// Row `row`'s digest: BLAKE2b of the image's digest and the row's index, so
// that every row's positions are keyed by the whole image and their place.
ImageDigest digest_of_row(const ImageDigest& image, int row) {
  std::vector<std::uint8_t> bytes(image.begin(), image.end());
  const auto index = static_cast<std::int32_t>(row);
  bytes.resize(bytes.size() + sizeof(index));
  std::memcpy(bytes.data() + image.size(), &index, sizeof(index));
  return image_digest(bytes);
}

class Mistral3ImagePrompts final
    : public ProcessorAndTower<quire::vision::PixtralOptions, vision::PixtralVisionEncoder> {
 public:
  using ProcessorAndTower::ProcessorAndTower;

  std::shared_ptr<const PreparedImage> prepare(const quire::vision::RgbImage& image) override {
    const quire::vision::ProcessedImage processed = processor_->process(image);
    // [3, height, width], both multiples of the merged patch.
    const int height = static_cast<int>(processed.shape[1]);
    const int width = static_cast<int>(processed.shape[2]);
    auto shared = std::make_shared<SharedRows>();
    shared->tower = tower_;
    shared->pixels = processed.pixel_values;
    shared->height = height;
    shared->width = width;
    shared->rows = height / options_.patch_height;
    shared->columns = width / options_.patch_width;

    auto prepared = std::make_shared<PreparedImage>();
    prepared->marker = options_.image_token;
    prepared->text = processed.tokens.text();
    prepared->position_text = options_.image_token;
    const ImageDigest digest = tower_input_digest({3, height, width}, shared->pixels);
    for (int row = 0; row < shared->rows; ++row) {
      auto run = std::make_shared<PromptImage>();
      run->digest = digest_of_row(digest, row);
      run->positions = shared->columns;
      run->both_ways = false;  // Pixtral: causal over the image as over text
      run->embed = [shared, row] { return shared->row(row); };
      prepared->runs.push_back(std::move(run));
    }
    return prepared;
  }
};

}  // namespace

std::unique_ptr<FamilyImagePrompts> open_mistral3_image_prompts(
    const std::filesystem::path& directory, std::shared_ptr<kernels::ThreadPool> pool) {
  const std::optional<vision::Mistral3VisionConfig> mistral3 =
      vision::read_mistral3_vision_config(directory);
  if (!mistral3) return nullptr;
  quire::vision::ProcessorConfig config = quire::vision::read_processor_config(directory);
  const auto* options = std::get_if<quire::vision::PixtralOptions>(&config.family);
  if (options == nullptr) {
    throw ModelError("the image processor of " + directory.string() + " (" +
                     config.image_processor_type +
                     ") is not Pixtral's, which its config.json (Mistral3ForConditionalGeneration) "
                     "describes");
  }
  const int token_pixels = mistral3->token_pixels();
  if (options->patch_height != token_pixels || options->patch_width != token_pixels) {
    throw ModelError("the image processor of " + directory.string() + " makes one [IMG] token of " +
                     std::to_string(options->patch_width) + " x " +
                     std::to_string(options->patch_height) +
                     " pixels (processor_config.json's patch_size x spatial_merge_size) where "
                     "config.json's vision tower merges " +
                     std::to_string(token_pixels) + " x " + std::to_string(token_pixels) +
                     " (vision_config.patch_size x spatial_merge_size)");
  }
  const int longest = mistral3->tower.image_size;
  if (options->max_width > longest || options->max_height > longest) {
    throw ModelError("the image processor of " + directory.string() + " fits images within " +
                     std::to_string(options->max_width) + " x " +
                     std::to_string(options->max_height) +
                     " pixels (preprocessor_config.json's size) where the vision tower takes at "
                     "most " +
                     std::to_string(longest) + " (config.json's vision_config.image_size)");
  }
  return std::make_unique<Mistral3ImagePrompts>(
      std::move(config), std::make_shared<PixtralTower>(directory, std::move(pool)));
}

}  // namespace quire::engine::detail
