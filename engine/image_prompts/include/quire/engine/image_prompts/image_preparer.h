#pragma once

// A model's vision side as a chat uses it: an image file's pixels become a
// PreparedImage (engine/generator image_input.h): the processor's output,
// the text the template's marker becomes, and a PromptImage per run of image
// positions whose embeddings the vision tower computes when the generator
// first needs them. The tower's weights are read on the first image that
// must be encoded, not when the model loads.

#include <filesystem>
#include <memory>

#include "quire/engine/generator/image_input.h"
#include "quire/engine/vision/rgb_image.h"
#include "quire/engine/vision/vision_tower_summary.h"
#include "quire/kernels/cpu/thread_pool.h"

namespace quire::engine {

namespace detail {
class FamilyImagePrompts;
}

class ImagePreparer {
 public:
  // Reads the directory's processor files and vision config, not its
  // tower's weights. Throws ModelError naming the file or key when the
  // model has no vision side Quire runs (a text-only model, a family whose
  // tower is not yet implemented), or its files are broken. Gemma 3,
  // Qwen2.5-VL and Mistral Small 3 (src/<family>_image_prompts.cpp).
  static std::shared_ptr<ImagePreparer> open(const std::filesystem::path& directory,
                                             std::shared_ptr<kernels::ThreadPool> pool);
  ~ImagePreparer();

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
  explicit ImagePreparer(std::unique_ptr<detail::FamilyImagePrompts> family);

  std::unique_ptr<detail::FamilyImagePrompts> family_;
};

}  // namespace quire::engine
