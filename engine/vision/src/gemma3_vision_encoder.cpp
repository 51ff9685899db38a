#include "quire/engine/vision/gemma3_vision_encoder.h"

#include "quire/engine/io/model_tensors.h"
#include "quire/engine/model_error.h"

namespace quire::engine::vision {

Gemma3VisionEncoder::Gemma3VisionEncoder(Gemma3VisionConfig config, Gemma3VisionWeights weights)
    : config_(std::move(config)), weights_(std::move(weights)) {}

Gemma3VisionEncoder Gemma3VisionEncoder::load(const std::filesystem::path& directory) {
  std::optional<Gemma3VisionConfig> config = read_gemma3_vision_config(directory);
  if (!config) {
    throw ModelError(directory.string() +
                     ": this model cannot see images (config.json describes no Gemma 3 vision "
                     "tower); choose a Gemma3ForConditionalGeneration download");
  }
  const io::ModelTensors tensors = io::ModelTensors::open(directory);
  Gemma3VisionWeights weights = load_gemma3_vision_weights(tensors, *config);
  return Gemma3VisionEncoder(std::move(*config), std::move(weights));
}

ImageEmbeddings Gemma3VisionEncoder::embed(kernels::ThreadPool& pool,
                                           const PixelTensor& pixels) const {
  const std::vector<float> tower = run_siglip_tower(pool, config_.tower, weights_.tower, pixels);
  ImageEmbeddings embeddings;
  embeddings.tokens = config_.tokens_per_image;
  embeddings.width = config_.text_hidden_size;
  embeddings.values = run_gemma3_projector(pool, config_, weights_.projector, tower);
  return embeddings;
}

}  // namespace quire::engine::vision
