#pragma once

// Private: the part of ImagePreparer that differs by model family, one
// implementation per family (gemma3_image_prompts.cpp,
// qwen25_image_prompts.cpp, mistral3_image_prompts.cpp), and what they
// share: a tower read on first use, and the digest of a tower's input.

#include <atomic>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <variant>
#include <vector>

#include "quire/engine/generator/image_input.h"
#include "quire/engine/vision/image_processor.h"
#include "quire/engine/vision/processor_config.h"
#include "quire/engine/vision/rgb_image.h"
#include "quire/kernels/cpu/thread_pool.h"

namespace quire::engine::detail {

// One family's processor, prompt layout and tower (see ImagePreparer).
class FamilyImagePrompts {
 public:
  virtual ~FamilyImagePrompts() = default;
  virtual void load_tower() = 0;
  virtual std::shared_ptr<const PreparedImage> prepare(const quire::vision::RgbImage& image) = 0;
  virtual int positions_of(int width, int height) const = 0;
  virtual int tower_runs() const = 0;
};

// Each returns nothing when config.json does not describe its family with
// a vision tower, and throws ModelError naming the file and key when the
// processor files do not fit the tower the config describes.
std::unique_ptr<FamilyImagePrompts> open_gemma3_image_prompts(
    const std::filesystem::path& directory, std::shared_ptr<kernels::ThreadPool> pool);
std::unique_ptr<FamilyImagePrompts> open_qwen25_image_prompts(
    const std::filesystem::path& directory, std::shared_ptr<kernels::ThreadPool> pool);
std::unique_ptr<FamilyImagePrompts> open_mistral3_image_prompts(
    const std::filesystem::path& directory, std::shared_ptr<kernels::ThreadPool> pool);

// A vision encoder read on first use and shared by every image's embed():
// the generator runs it on its own thread, one image at a time.
template <class Encoder>
struct LazyTower {
  LazyTower(std::filesystem::path from, std::shared_ptr<kernels::ThreadPool> threads)
      : directory(std::move(from)), pool(std::move(threads)) {}

  void load() {
    const std::lock_guard lock(mutex);
    if (!encoder) encoder.emplace(Encoder::load(directory));
  }

  // Encoder::embed(pool, inputs...)'s values.
  template <class... Inputs>
  std::vector<float> embed(const Inputs&... inputs) {
    load();
    const std::lock_guard lock(mutex);
    ++runs;
    return encoder->embed(*pool, inputs...).values;
  }

  const std::filesystem::path directory;
  const std::shared_ptr<kernels::ThreadPool> pool;
  std::mutex mutex;
  std::optional<Encoder> encoder;
  std::atomic<int> runs = 0;
};

// What every family holds: its processor files (`Options`, the family's
// part of them), the processor they make, and its tower.
template <class Options, class Encoder>
class ProcessorAndTower : public FamilyImagePrompts {
 public:
  ProcessorAndTower(quire::vision::ProcessorConfig config,
                    std::shared_ptr<LazyTower<Encoder>> tower)
      : config_(std::move(config)),
        options_(std::get<Options>(config_.family)),
        processor_(quire::vision::make_image_processor(config_)),
        tower_(std::move(tower)) {}

  void load_tower() override { tower_->load(); }
  int tower_runs() const override { return tower_->runs; }
  int positions_of(int width, int height) const override {
    return static_cast<int>(processor_->token_layout(width, height).image_positions());
  }

 protected:
  quire::vision::ProcessorConfig config_;
  Options options_;
  std::unique_ptr<quire::vision::ImageProcessor> processor_;
  std::shared_ptr<LazyTower<Encoder>> tower_;
};

// BLAKE2b-256 of one tower input: its three shape numbers (channels, height,
// width; or Qwen's patch grid t, h, w), then its floats' bytes.
ImageDigest tower_input_digest(std::array<std::int32_t, 3> shape, std::span<const float> values);

}  // namespace quire::engine::detail
