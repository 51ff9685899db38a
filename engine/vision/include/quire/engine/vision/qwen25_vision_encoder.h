#pragma once

// Qwen2.5-VL's image side in one piece: a model directory's vision tower and
// patch merger loaded, and an image's patches (Qwen2VLImageProcessor's
// pixel_values and grid_thw) turned into the embeddings that stand in the
// prompt for its grid_h * grid_w / merge^2 <|image_pad|> tokens. Runs on the
// CPU (docs/vision.md says what runs where).

#include <array>
#include <filesystem>
#include <span>

#include "quire/engine/vision/image_embeddings.h"
#include "quire/engine/vision/qwen25_vision_tower.h"

namespace quire::engine::vision {

class Qwen25VisionEncoder {
 public:
  Qwen25VisionEncoder(Qwen25VisionConfig config, Qwen25VisionWeights weights);

  // Reads config.json and the safetensors files of `directory`. Throws
  // ModelError when the model is no Qwen2.5-VL with a vision tower (naming
  // the directory), or for anything check_qwen25_vision_tensors() refuses.
  static Qwen25VisionEncoder load(const std::filesystem::path& directory);

  const Qwen25VisionConfig& config() const { return config_; }

  // `patches` [t * h * w, in_channels * temporal * patch * patch] and
  // `grid_thw` (t, h, w) as the processor gives them. Throws
  // std::invalid_argument for patches that do not fit the grid.
  ImageEmbeddings embed(kernels::ThreadPool& pool, std::span<const float> patches,
                        std::array<int, 3> grid_thw) const;

 private:
  Qwen25VisionConfig config_;
  Qwen25VisionWeights weights_;
};

}  // namespace quire::engine::vision
