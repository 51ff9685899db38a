// Times Gemma 3's vision encoder (SigLIP tower and projector) on the CPU at
// a real shape with random BF16 weights: by default gemma-3-4b-it's
// (SigLIP-so400m at 896 x 896, 4,096 patches, 27 layers, into 2,560 wide
// tokens). What it measures is arithmetic, not accuracy: the weights are
// noise of a sensible scale.
//
//   quire-vision-bench [--layers N] [--threads N] [--text-hidden N]

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

#include "quire/engine/vision/gemma3_vision_encoder.h"
#include "quire/kernels/cpu/half.h"

namespace {

using namespace quire::engine::vision;

std::vector<float> noise(std::mt19937& random, std::int64_t count, double mean, double deviation) {
  std::normal_distribution<float> draw(static_cast<float>(mean), static_cast<float>(deviation));
  std::vector<float> values(static_cast<std::size_t>(count));
  for (float& value : values)
    value = draw(random);
  return values;
}

DenseLinear random_linear(std::mt19937& random, std::int64_t in, std::int64_t out) {
  DenseLinear linear;
  linear.in_features = in;
  linear.out_features = out;
  linear.dtype = quire::kernels::DType::BF16;
  const std::vector<float> values = noise(random, in * out, 0.0, 1.0 / std::sqrt(double(in)));
  linear.weight.resize(values.size() * 2);
  for (std::size_t i = 0; i < values.size(); ++i) {
    const std::uint16_t bits = quire::kernels::float_to_bf16(values[i]);
    std::memcpy(linear.weight.data() + 2 * i, &bits, 2);
  }
  linear.bias = noise(random, out, 0.0, 0.1);
  return linear;
}

LayerNormWeights random_norm(std::mt19937& random, std::int64_t width) {
  return {noise(random, width, 1.0, 0.1), noise(random, width, 0.0, 0.1)};
}

int option(int argc, char** argv, const char* name, int fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return std::atoi(argv[i + 1]);
  return fallback;
}

}  // namespace

int main(int argc, char** argv) {
  Gemma3VisionConfig config;
  SiglipConfig& c = config.tower;
  c.hidden_size = 1152;
  c.intermediate_size = 4304;
  c.num_layers = option(argc, argv, "--layers", 27);
  c.num_heads = 16;
  c.image_size = 896;
  c.patch_size = 14;
  config.tokens_per_image = 256;
  config.text_hidden_size = option(argc, argv, "--text-hidden", 2560);
  quire::kernels::ThreadPool pool(option(argc, argv, "--threads", 0));

  std::mt19937 random(7);
  Gemma3VisionWeights weights;
  weights.tower.patch_embedding = random_linear(random, c.patch_values(), c.hidden_size);
  weights.tower.position_embedding = noise(random, std::int64_t(c.patches()) * c.hidden_size, 0, 1);
  for (int i = 0; i < c.num_layers; ++i) {
    SiglipLayerWeights& layer = weights.tower.layers.emplace_back();
    layer.norm1 = random_norm(random, c.hidden_size);
    layer.q = random_linear(random, c.hidden_size, c.hidden_size);
    layer.k = random_linear(random, c.hidden_size, c.hidden_size);
    layer.v = random_linear(random, c.hidden_size, c.hidden_size);
    layer.out = random_linear(random, c.hidden_size, c.hidden_size);
    layer.norm2 = random_norm(random, c.hidden_size);
    layer.fc1 = random_linear(random, c.hidden_size, c.intermediate_size);
    layer.fc2 = random_linear(random, c.intermediate_size, c.hidden_size);
  }
  weights.tower.post_norm = random_norm(random, c.hidden_size);
  weights.projector.norm_weight = noise(random, c.hidden_size, 0.0, 0.1);
  weights.projector.projection = random_linear(random, c.hidden_size, config.text_hidden_size);
  weights.projector.projection.bias.clear();

  const std::vector<float> pixels =
      noise(random, std::int64_t(c.num_channels) * c.image_size * c.image_size, 0.0, 0.5);
  const Gemma3VisionEncoder encoder(config, std::move(weights));
  const auto start = std::chrono::steady_clock::now();
  const ImageEmbeddings embeddings =
      encoder.embed(pool, {pixels, c.num_channels, c.image_size, c.image_size});
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  double sum = 0.0;
  for (const float value : embeddings.values)
    sum += std::abs(value);
  std::printf(
      "SigLIP %dx%d, patch %d: %d patches, %d layers, width %d, MLP %d; %d tokens of %d\n"
      "threads %d: %.2f s (%.3f s a layer); mean |output| %.4f\n",
      c.image_size, c.image_size, c.patch_size, c.patches(), c.num_layers, c.hidden_size,
      c.intermediate_size, embeddings.tokens, embeddings.width, pool.size(), seconds,
      seconds / c.num_layers, sum / double(embeddings.values.size()));
  return 0;
}
