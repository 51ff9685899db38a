#pragma once

// Mistral Small 3.x's image side in one piece: a model directory's Pixtral
// tower and Mistral 3 projector loaded, and an image's pixel tensor turned
// into the embeddings that stand in the prompt for its [IMG] tokens.
// Runs on the CPU (docs/vision.md says what runs where).

#include <filesystem>

#include "quire/engine/vision/image_embeddings.h"
#include "quire/engine/vision/mistral3_projector.h"
#include "quire/engine/vision/pixtral_tower.h"

namespace quire::engine::vision {

class PixtralVisionEncoder {
 public:
  PixtralVisionEncoder(Mistral3VisionConfig config, Mistral3VisionWeights weights);

  // Reads config.json and the safetensors files of `directory`. Throws
  // ModelError when the model has no Pixtral tower (naming the directory),
  // or for anything check_mistral3_vision_tensors() refuses.
  static PixtralVisionEncoder load(const std::filesystem::path& directory);

  const Mistral3VisionConfig& config() const { return config_; }

  // check_pixtral_pixels(), the tower, then the projector: one embedding per
  // spatial_merge_size square of patches, row by row, (height / 28) x
  // (width / 28) of them for Mistral Small 3.1. The [IMG_BREAK] and
  // [IMG_END] tokens between rows are text (image_token_layout).
  ImageEmbeddings embed(kernels::ThreadPool& pool, const PixelTensor& pixels) const;

 private:
  Mistral3VisionConfig config_;
  Mistral3VisionWeights weights_;
};

}  // namespace quire::engine::vision
