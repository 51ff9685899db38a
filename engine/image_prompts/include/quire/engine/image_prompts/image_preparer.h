#pragma once

// A model's vision side as a chat uses it: an image file's pixels become a
// PreparedImage (engine/generator image_input.h): the processor's output,
// the text the template's marker becomes, and a PromptImage per run of image
// positions whose embeddings the vision tower computes when the generator
// first needs them. The tower's weights are read on the first image that
// must be encoded, not when the model loads.

#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>

#include "quire/engine/generator/image_input.h"
#include "quire/engine/vision/gemma3_vision_encoder.h"
#include "quire/engine/vision/image_processor.h"
#include "quire/engine/vision/processor_config.h"
#include "quire/engine/vision/rgb_image.h"
#include "quire/engine/vision/vision_tower_summary.h"
#include "quire/kernels/cpu/thread_pool.h"

namespace quire::engine {

namespace detail {
class Mistral3ImagePrompts;
}

class ImagePreparer {
 public:
  // Reads the directory's processor files and vision config, not its
  // tower's weights. Throws ModelError naming the file or key when the
  // model has no vision side Quire runs (a text-only model, a family whose
  // tower is not yet implemented), or its files are broken. Gemma 3 and
  // Qwen2.5-VL (qwen25_image_prompts.cpp).
  static std::shared_ptr<ImagePreparer> open(const std::filesystem::path& directory,
                                             std::shared_ptr<kernels::ThreadPool> pool);

  // Reads the tower's weights now rather than on the first image (the
  // app and the server load it with the model, whose plan has priced it).
  // Throws ModelError naming the tensor at fault.
  void load_tower();

  // Processes `image` (quire::vision::ImageError for one the processor refuses).
  std::shared_ptr<const PreparedImage> prepare(const quire::vision::RgbImage& image);

  // Whether the images of a model with this tower reach its language model
  // (the families whose processor, tower and prompt layout are joined here:
  // Gemma 3's, Qwen2.5-VL's and Mistral Small 3's).
  static bool takes_images_of(const vision::VisionTowerSummary& tower);

  // Positions one image of this size takes in a prompt.
  int positions_of(int width, int height) const;

  // How many times the tower has encoded an image (a crop counts as one)
  // since open(): an image whose positions the cache holds adds none.
  int tower_runs() const;

 private:
  struct Tower;
  ImagePreparer(std::filesystem::path directory, quire::vision::ProcessorConfig config,
                std::shared_ptr<kernels::ThreadPool> pool);
  explicit ImagePreparer(std::unique_ptr<detail::Mistral3ImagePrompts> mistral3);

  std::filesystem::path directory_;
  quire::vision::ProcessorConfig config_;
  std::unique_ptr<quire::vision::ImageProcessor> processor_;
  std::shared_ptr<Tower> tower_;
  // Set for a Mistral Small 3 directory, which it then handles alone.
  std::shared_ptr<detail::Mistral3ImagePrompts> mistral3_;
  // Qwen2.5-VL (qwen25_image_prompts.cpp): its tower, set only for that family.
  struct QwenTower;
  std::shared_ptr<QwenTower> qwen_tower_;
  static std::shared_ptr<ImagePreparer> open_qwen25(const std::filesystem::path& directory,
                                                    std::shared_ptr<kernels::ThreadPool> pool);
  std::shared_ptr<const PreparedImage> prepare_qwen25(const quire::vision::RgbImage& image);
  void load_qwen25_tower();
  int qwen25_tower_runs() const;
};

}  // namespace quire::engine
