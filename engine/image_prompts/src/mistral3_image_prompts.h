#pragma once

// Private: ImagePreparer's part for Mistral Small 3.x
// (Mistral3ForConditionalGeneration). PixtralProcessor writes an image as
// rows of [IMG], each row ended by [IMG_BREAK] and the last by [IMG_END]
// instead; only the [IMG] positions take the tower's rows, and attention
// over them is causal. Each row is one run of positions (a PromptImage with
// its own digest, derived from the image's and the row's index), and every
// row's embed() takes its slice of one tower output, computed once for the
// image.

#include <filesystem>
#include <memory>

#include "quire/engine/generator/image_input.h"
#include "quire/engine/vision/image_processor.h"
#include "quire/engine/vision/processor_config.h"
#include "quire/engine/vision/rgb_image.h"
#include "quire/kernels/cpu/thread_pool.h"

namespace quire::engine::detail {

class Mistral3ImagePrompts {
 public:
  // Nothing when config.json does not describe a Mistral 3 model with a
  // vision tower. Throws ModelError naming the file and key when its
  // processor files do not fit the tower.
  static std::unique_ptr<Mistral3ImagePrompts> open(const std::filesystem::path& directory,
                                                    std::shared_ptr<kernels::ThreadPool> pool);

  void load_tower();
  std::shared_ptr<const PreparedImage> prepare(const quire::vision::RgbImage& image) const;
  int positions_of(int width, int height) const;
  int tower_runs() const;

  struct Tower;

 private:
  Mistral3ImagePrompts(quire::vision::ProcessorConfig config, std::shared_ptr<Tower> tower);

  quire::vision::ProcessorConfig config_;
  std::unique_ptr<quire::vision::ImageProcessor> processor_;
  std::shared_ptr<Tower> tower_;
};

}  // namespace quire::engine::detail
