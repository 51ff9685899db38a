#include "quire/engine/vision/vision_weights.h"

#include <functional>

#include "quire/engine/model_error.h"
#include "weight_reader.h"

namespace quire::engine::vision {
namespace {

using kernels::DType;

constexpr const char* kOldTower = "vision_tower.vision_model.";
constexpr const char* kNewTower = "model.vision_tower.vision_model.";
constexpr const char* kOldProjector = "multi_modal_projector.";
constexpr const char* kNewProjector = "model.multi_modal_projector.";

VisionTensorPrefixes find_prefixes(const io::ModelTensors& tensors) {
  const std::string probe = "embeddings.patch_embedding.weight";
  if (tensors.contains(std::string(kOldTower) + probe)) return {kOldTower, kOldProjector};
  if (tensors.contains(std::string(kNewTower) + probe)) return {kNewTower, kNewProjector};
  throw ModelError(tensors.directory().string() + ": config.json describes a vision tower, but " +
                   "the files hold neither " + kOldTower + probe + " nor " + kNewTower + probe +
                   "; the download is incomplete, or holds only the language model");
}

// Visits every tensor of the tower and projector with its expected shape, in
// the order the model runs them.
void for_each_expected(
    const Gemma3VisionConfig& config, const VisionTensorPrefixes& prefixes,
    const std::function<void(const std::string&, std::vector<std::int64_t>)>& f) {
  const SiglipConfig& c = config.tower;
  const std::int64_t width = c.hidden_size;
  const std::string& t = prefixes.tower;
  f(t + "embeddings.patch_embedding.weight", {width, c.num_channels, c.patch_size, c.patch_size});
  f(t + "embeddings.patch_embedding.bias", {width});
  f(t + "embeddings.position_embedding.weight", {c.patches(), width});
  for (int i = 0; i < c.num_layers; ++i) {
    const std::string layer = t + "encoder.layers." + std::to_string(i) + ".";
    for (const char* norm : {"layer_norm1", "layer_norm2"}) {
      f(layer + norm + ".weight", {width});
      f(layer + norm + ".bias", {width});
    }
    for (const char* projection : {"q_proj", "k_proj", "v_proj", "out_proj"}) {
      f(layer + "self_attn." + projection + ".weight", {width, width});
      f(layer + "self_attn." + projection + ".bias", {width});
    }
    f(layer + "mlp.fc1.weight", {c.intermediate_size, width});
    f(layer + "mlp.fc1.bias", {c.intermediate_size});
    f(layer + "mlp.fc2.weight", {width, c.intermediate_size});
    f(layer + "mlp.fc2.bias", {width});
  }
  f(t + "post_layernorm.weight", {width});
  f(t + "post_layernorm.bias", {width});
  f(prefixes.projector + "mm_input_projection_weight", {width, config.text_hidden_size});
  f(prefixes.projector + "mm_soft_emb_norm.weight", {width});
}

// What WeightReader widens to FP32 when loading (biases, norms, the
// position embedding); the linears' weights (2-D or the patch convolution's
// 4-D) stay in their file dtype.
bool widened_when_loaded(const std::string& name, const std::vector<std::int64_t>& shape) {
  return shape.size() == 1 || name.ends_with("position_embedding.weight");
}

// A layer beyond vision_config's count means the config describes another
// tower than the files hold.
void check_no_extra_layers(const io::ModelTensors& tensors, const Gemma3VisionConfig& config,
                           const VisionTensorPrefixes& prefixes) {
  const std::string extra = prefixes.tower + "encoder.layers." +
                            std::to_string(config.tower.num_layers) + ".layer_norm1.weight";
  if (!tensors.contains(extra)) return;
  throw ModelError(tensors.directory().string() + ": the files hold " + extra +
                   ", but vision_config.num_hidden_layers is " +
                   std::to_string(config.tower.num_layers) +
                   "; config.json does not match the vision tower's weights");
}

}  // namespace

kernels::LinearWeight DenseLinear::view() const {
  kernels::LinearWeight view;
  view.in_features = in_features;
  view.out_features = out_features;
  view.format = kernels::DenseWeight{weight.data(), dtype};
  view.bias = bias.empty() ? nullptr : bias.data();
  view.bias_dtype = DType::F32;
  return view;
}

VisionTensorSummary check_gemma3_vision_tensors(const io::ModelTensors& tensors,
                                                const Gemma3VisionConfig& config) {
  VisionTensorSummary summary;
  summary.prefixes = find_prefixes(tensors);
  for_each_expected(
      config, summary.prefixes, [&](const std::string& name, std::vector<std::int64_t> shape) {
        detail::check_tower_tensor_present(tensors, name);
        detail::count_tower_tensor(tensors, name, shape, widened_when_loaded(name, shape), summary);
      });
  check_no_extra_layers(tensors, config, summary.prefixes);
  summary.dtype =
      tensors.get(summary.prefixes.tower + "embeddings.patch_embedding.weight").info->dtype;
  return summary;
}

Gemma3VisionWeights load_gemma3_vision_weights(const io::ModelTensors& tensors,
                                               const Gemma3VisionConfig& config) {
  const VisionTensorPrefixes prefixes = check_gemma3_vision_tensors(tensors, config).prefixes;
  const detail::WeightReader read(tensors);
  const std::string& t = prefixes.tower;
  Gemma3VisionWeights weights;
  SiglipWeights& tower = weights.tower;
  tower.patch_embedding = read.linear(t + "embeddings.patch_embedding");
  tower.position_embedding = read.floats(t + "embeddings.position_embedding.weight");
  for (int i = 0; i < config.tower.num_layers; ++i) {
    const std::string layer = t + "encoder.layers." + std::to_string(i) + ".";
    SiglipLayerWeights& w = tower.layers.emplace_back();
    w.norm1 = read.layer_norm(layer + "layer_norm1");
    w.q = read.linear(layer + "self_attn.q_proj");
    w.k = read.linear(layer + "self_attn.k_proj");
    w.v = read.linear(layer + "self_attn.v_proj");
    w.out = read.linear(layer + "self_attn.out_proj");
    w.norm2 = read.layer_norm(layer + "layer_norm2");
    w.fc1 = read.linear(layer + "mlp.fc1");
    w.fc2 = read.linear(layer + "mlp.fc2");
  }
  tower.post_norm = read.layer_norm(t + "post_layernorm");
  weights.projector.norm_weight = read.floats(prefixes.projector + "mm_soft_emb_norm.weight");
  weights.projector.projection = read.transposed(prefixes.projector + "mm_input_projection_weight");
  return weights;
}

}  // namespace quire::engine::vision
