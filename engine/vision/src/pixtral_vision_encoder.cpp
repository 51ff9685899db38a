#include "quire/engine/vision/pixtral_vision_encoder.h"

#include "quire/engine/io/model_tensors.h"
#include "quire/engine/model_error.h"

namespace quire::engine::vision {

PixtralVisionEncoder::PixtralVisionEncoder(Mistral3VisionConfig config,
                                           Mistral3VisionWeights weights)
    : config_(std::move(config)), weights_(std::move(weights)) {}

PixtralVisionEncoder PixtralVisionEncoder::load(const std::filesystem::path& directory) {
  std::optional<Mistral3VisionConfig> config = read_mistral3_vision_config(directory);
  if (!config) {
    throw ModelError(directory.string() +
                     ": this model cannot see images (config.json describes no Pixtral vision "
                     "tower); choose a Mistral3ForConditionalGeneration download");
  }
  const io::ModelTensors tensors = io::ModelTensors::open(directory);
  Mistral3VisionWeights weights = load_mistral3_vision_weights(tensors, *config);
  return PixtralVisionEncoder(std::move(*config), std::move(weights));
}

ImageEmbeddings PixtralVisionEncoder::embed(kernels::ThreadPool& pool,
                                            const PixelTensor& pixels) const {
  const std::vector<float> tower = run_pixtral_tower(pool, config_, weights_.tower, pixels);
  ImageEmbeddings embeddings;
  embeddings.tokens = config_.tokens_for(pixels.height, pixels.width);
  embeddings.width = config_.text_hidden_size;
  embeddings.values = run_mistral3_projector(pool, config_, weights_.projector, tower,
                                             pixels.height / config_.tower.patch_size,
                                             pixels.width / config_.tower.patch_size);
  return embeddings;
}

}  // namespace quire::engine::vision
