// Qwen2.5-VL's images in a chat, as Qwen2_5_VLProcessor lays them out: the
// chat template writes "<|vision_start|><|image_pad|><|vision_end|>" for an
// image, and the processor repeats "<|image_pad|>" once per merged token,
// grid_t * grid_h * grid_w / merge_size^2 times. Those positions take the
// tower and patch merger's rows, attend causally like text, and carry their
// merged grid for the language model's M-RoPE positions.

#include <atomic>
#include <cstring>
#include <optional>
#include <string>
#include <variant>

#include "quire/engine/image_prompts/image_preparer.h"
#include "quire/engine/model_error.h"
#include "quire/engine/vision/qwen25_vision_config.h"
#include "quire/engine/vision/qwen25_vision_encoder.h"

namespace quire::engine {

// The tower, read on first use and shared by every image's embed().
struct ImagePreparer::QwenTower {
  std::filesystem::path directory;
  std::shared_ptr<kernels::ThreadPool> pool;
  std::mutex mutex;
  std::optional<vision::Qwen25VisionEncoder> encoder;
  std::atomic<int> runs = 0;

  void load() {
    const std::lock_guard lock(mutex);
    if (!encoder) encoder.emplace(vision::Qwen25VisionEncoder::load(directory));
  }

  std::vector<float> embed(std::span<const float> patches, std::array<int, 3> grid_thw) {
    load();
    const std::lock_guard lock(mutex);
    ++runs;
    return encoder->embed(*pool, patches, grid_thw).values;
  }
};

namespace {

// The digest of one tower input: its patch grid (t, h, w), then the
// patches' floats.
ImageDigest qwen_digest_of(std::span<const float> values, std::array<int, 3> grid_thw) {
  std::vector<std::uint8_t> bytes(3 * sizeof(std::int32_t) + values.size_bytes());
  const std::int32_t shape[3] = {grid_thw[0], grid_thw[1], grid_thw[2]};
  std::memcpy(bytes.data(), shape, sizeof(shape));
  std::memcpy(bytes.data() + sizeof(shape), values.data(), values.size_bytes());
  return image_digest(bytes);
}

void check_same(const std::filesystem::path& directory, const char* processor_key,
                int processor_value, const char* tower_key, int tower_value) {
  if (processor_value == tower_value) return;
  throw ModelError("the image processor of " + directory.string() + " has " + processor_key + " " +
                   std::to_string(processor_value) + " where config.json's vision_config." +
                   tower_key + " says " + std::to_string(tower_value) +
                   "; the two files must describe the same tower");
}

}  // namespace

std::shared_ptr<ImagePreparer> ImagePreparer::open_qwen25(
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
  std::shared_ptr<ImagePreparer> preparer(new ImagePreparer(directory, std::move(config), pool));
  preparer->qwen_tower_ = std::make_shared<QwenTower>();
  preparer->qwen_tower_->directory = directory;
  preparer->qwen_tower_->pool = std::move(pool);
  return preparer;
}

void ImagePreparer::load_qwen25_tower() {
  qwen_tower_->load();
}

int ImagePreparer::qwen25_tower_runs() const {
  return qwen_tower_->runs;
}

std::shared_ptr<const PreparedImage> ImagePreparer::prepare_qwen25(
    const quire::vision::RgbImage& image) {
  const auto& options = std::get<quire::vision::Qwen2VLOptions>(config_.family);
  const quire::vision::ProcessedImage processed = processor_->process(image);
  auto prepared = std::make_shared<PreparedImage>();
  // What Qwen2.5-VL's chat template writes for an image part; the
  // processor's text repeats the pad once per merged token.
  prepared->marker = options.vision_start_token + options.image_token + options.vision_end_token;
  prepared->text = processed.tokens.text();
  prepared->position_text = options.image_token;
  const std::array<int, 3> grid = processed.grid_thw;
  auto values = std::make_shared<const std::vector<float>>(processed.pixel_values);
  auto run = std::make_shared<PromptImage>();
  run->digest = qwen_digest_of(*values, grid);
  run->grid_t = grid[0];
  run->grid_h = grid[1] / options.merge_size;
  run->grid_w = grid[2] / options.merge_size;
  run->positions = run->grid_t * run->grid_h * run->grid_w;
  run->both_ways = false;  // Qwen2.5-VL attends causally over an image
  run->embed = [tower = qwen_tower_, values, grid] { return tower->embed(*values, grid); };
  prepared->runs.push_back(std::move(run));
  return prepared;
}

}  // namespace quire::engine
