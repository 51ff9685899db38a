#pragma once

// Gemma 3's image side in one piece: a model directory's vision tower and
// projector loaded, and an image's pixel tensor turned into the embeddings
// that stand in the prompt for its mm_tokens_per_image image tokens.
// Runs on the CPU (docs/vision.md says what runs where).

#include <filesystem>
#include <vector>

#include "quire/engine/vision/gemma3_projector.h"
#include "quire/engine/vision/image_embeddings.h"
#include "quire/engine/vision/siglip_tower.h"

namespace quire::engine::vision {

class Gemma3VisionEncoder {
 public:
  Gemma3VisionEncoder(Gemma3VisionConfig config, Gemma3VisionWeights weights);

  // Reads config.json and the safetensors files of `directory`. Throws
  // ModelError when the model has no vision tower (naming the directory), or
  // for anything check_gemma3_vision_tensors() refuses.
  static Gemma3VisionEncoder load(const std::filesystem::path& directory);

  const Gemma3VisionConfig& config() const { return config_; }

  // check_pixels(), the tower, then the projector.
  ImageEmbeddings embed(kernels::ThreadPool& pool, const PixelTensor& pixels) const;

 private:
  Gemma3VisionConfig config_;
  Gemma3VisionWeights weights_;
};

}  // namespace quire::engine::vision
