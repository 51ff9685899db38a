#include "quire/engine/image_prompts/image_preparer.h"

#include "family_image_prompts.h"
#include "quire/engine/model_error.h"

namespace quire::engine {

std::shared_ptr<ImagePreparer> ImagePreparer::open(const std::filesystem::path& directory,
                                                   std::shared_ptr<kernels::ThreadPool> pool) {
  for (const auto open_family :
       {detail::open_mistral3_image_prompts, detail::open_qwen25_image_prompts,
        detail::open_gemma3_image_prompts}) {
    if (std::unique_ptr<detail::FamilyImagePrompts> family = open_family(directory, pool))
      return std::shared_ptr<ImagePreparer>(new ImagePreparer(std::move(family)));
  }
  throw ModelError("the model in " + directory.string() +
                   " has no vision tower whose images Quire gives to the model (Gemma 3's, "
                   "Qwen2.5-VL's or Mistral Small 3's)");
}

ImagePreparer::ImagePreparer(std::unique_ptr<detail::FamilyImagePrompts> family)
    : family_(std::move(family)) {}

ImagePreparer::~ImagePreparer() = default;

void ImagePreparer::load_tower() {
  family_->load_tower();
}

std::shared_ptr<const PreparedImage> ImagePreparer::prepare(const quire::vision::RgbImage& image) {
  return family_->prepare(image);
}

bool ImagePreparer::takes_images_of(const vision::VisionTowerSummary& tower) {
  return kGeneratorTakesImages &&
         (tower.projector == "Gemma 3" || tower.tower == "Qwen2.5-VL ViT" ||
          tower.projector == "Mistral 3");
}

int ImagePreparer::positions_of(int width, int height) const {
  return family_->positions_of(width, height);
}

int ImagePreparer::tower_runs() const {
  return family_->tower_runs();
}

}  // namespace quire::engine
