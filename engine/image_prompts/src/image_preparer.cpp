#include "quire/engine/image_prompts/image_preparer.h"

#include <atomic>
#include <cstring>
#include <string>
#include <variant>

#include "mistral3_image_prompts.h"
#include "quire/engine/model_error.h"
#include "quire/engine/vision/gemma3_vision_config.h"

namespace quire::engine {

// The tower, read on first use and shared by every image's embed().
struct ImagePreparer::Tower {
  std::filesystem::path directory;
  std::shared_ptr<kernels::ThreadPool> pool;
  std::mutex mutex;
  std::optional<vision::Gemma3VisionEncoder> encoder;
  std::atomic<int> runs = 0;

  void load() {
    const std::lock_guard lock(mutex);
    if (!encoder) encoder.emplace(vision::Gemma3VisionEncoder::load(directory));
  }

  std::vector<float> embed(const vision::PixelTensor& pixels) {
    load();
    const std::lock_guard lock(mutex);
    ++runs;
    return encoder->embed(*pool, pixels).values;
  }
};

namespace {

// The digest of one tower input: its shape, then its floats' bytes.
ImageDigest digest_of(std::span<const float> values, int channels, int height, int width) {
  std::vector<std::uint8_t> bytes(3 * sizeof(std::int32_t) + values.size_bytes());
  const std::int32_t shape[3] = {channels, height, width};
  std::memcpy(bytes.data(), shape, sizeof(shape));
  std::memcpy(bytes.data() + sizeof(shape), values.data(), values.size_bytes());
  return image_digest(bytes);
}

}  // namespace

std::shared_ptr<ImagePreparer> ImagePreparer::open(const std::filesystem::path& directory,
                                                   std::shared_ptr<kernels::ThreadPool> pool) {
  if (auto mistral3 = detail::Mistral3ImagePrompts::open(directory, pool))
    return std::shared_ptr<ImagePreparer>(new ImagePreparer(std::move(mistral3)));
  const std::optional<vision::Gemma3VisionConfig> gemma =
      vision::read_gemma3_vision_config(directory);
  if (!gemma) {
    if (std::shared_ptr<ImagePreparer> qwen = open_qwen25(directory, pool)) return qwen;
    throw ModelError("the model in " + directory.string() +
                     " has no vision tower whose images Quire gives to the model (Gemma 3's, "
                     "Qwen2.5-VL's or Mistral Small 3's)");
  }
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
  return std::shared_ptr<ImagePreparer>(
      new ImagePreparer(directory, std::move(config), std::move(pool)));
}

ImagePreparer::ImagePreparer(std::filesystem::path directory, quire::vision::ProcessorConfig config,
                             std::shared_ptr<kernels::ThreadPool> pool)
    : directory_(std::move(directory)),
      config_(std::move(config)),
      processor_(quire::vision::make_image_processor(config_)),
      tower_(std::make_shared<Tower>()) {
  tower_->directory = directory_;
  tower_->pool = std::move(pool);
}

ImagePreparer::ImagePreparer(std::unique_ptr<detail::Mistral3ImagePrompts> mistral3)
    : mistral3_(std::move(mistral3)) {}

void ImagePreparer::load_tower() {
  if (mistral3_) return mistral3_->load_tower();
  if (qwen_tower_) return load_qwen25_tower();
  tower_->load();
}

bool ImagePreparer::takes_images_of(const vision::VisionTowerSummary& tower) {
  return kGeneratorTakesImages &&
         (tower.projector == "Gemma 3" || tower.tower == "Qwen2.5-VL ViT" ||
          tower.projector == "Mistral 3");
}

int ImagePreparer::positions_of(int width, int height) const {
  if (mistral3_) return mistral3_->positions_of(width, height);
  return static_cast<int>(processor_->token_layout(width, height).image_positions());
}

int ImagePreparer::tower_runs() const {
  if (mistral3_) return mistral3_->tower_runs();
  if (qwen_tower_) return qwen25_tower_runs();
  return tower_->runs;
}

std::shared_ptr<const PreparedImage> ImagePreparer::prepare(const quire::vision::RgbImage& image) {
  if (mistral3_) return mistral3_->prepare(image);
  if (qwen_tower_) return prepare_qwen25(image);
  const auto& options = std::get<quire::vision::Gemma3Options>(config_.family);
  const quire::vision::ProcessedImage processed = processor_->process(image);
  auto prepared = std::make_shared<PreparedImage>();
  prepared->marker = options.boi_token;
  prepared->text = processed.tokens.text();
  prepared->position_text = options.image_token;
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
    run->digest = digest_of(*values, channels, height, width);
    run->positions = options.image_seq_length;
    run->both_ways = true;  // Gemma 3: an image's positions see each other
    run->embed = [tower = tower_, values, channels, height, width] {
      return tower->embed(vision::PixelTensor{*values, channels, height, width});
    };
    prepared->runs.push_back(std::move(run));
  }
  return prepared;
}

}  // namespace quire::engine
