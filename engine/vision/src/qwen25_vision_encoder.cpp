#include "quire/engine/vision/qwen25_vision_encoder.h"

#include "quire/engine/io/model_tensors.h"
#include "quire/engine/model_error.h"

namespace quire::engine::vision {

Qwen25VisionEncoder::Qwen25VisionEncoder(Qwen25VisionConfig config, Qwen25VisionWeights weights)
    : config_(std::move(config)), weights_(std::move(weights)) {}

Qwen25VisionEncoder Qwen25VisionEncoder::load(const std::filesystem::path& directory) {
  std::optional<Qwen25VisionConfig> config = read_qwen25_vision_config(directory);
  if (!config) {
    throw ModelError(directory.string() +
                     ": this model cannot see images (config.json describes no Qwen2.5-VL "
                     "vision tower); choose a Qwen2_5_VLForConditionalGeneration download");
  }
  const io::ModelTensors tensors = io::ModelTensors::open(directory);
  Qwen25VisionWeights weights = load_qwen25_vision_weights(tensors, *config);
  return Qwen25VisionEncoder(std::move(*config), std::move(weights));
}

ImageEmbeddings Qwen25VisionEncoder::embed(kernels::ThreadPool& pool,
                                           std::span<const float> patches,
                                           std::array<int, 3> grid_thw) const {
  const PatchGrid grid{grid_thw[0], grid_thw[1], grid_thw[2]};
  ImageEmbeddings embeddings;
  embeddings.values = run_qwen25_vision(pool, config_, weights_, patches, grid);
  embeddings.width = config_.out_hidden_size;
  embeddings.tokens = grid.t * grid.h * grid.w / config_.merge_unit();
  return embeddings;
}

}  // namespace quire::engine::vision
