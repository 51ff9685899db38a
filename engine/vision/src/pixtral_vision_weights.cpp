#include "quire/engine/vision/pixtral_vision_weights.h"

#include <functional>

#include "quire/engine/model_error.h"
#include "weight_reader.h"

namespace quire::engine::vision {
namespace {

constexpr const char* kPublishedTower = "vision_tower.";
constexpr const char* kNewerTower = "model.vision_tower.";
constexpr const char* kPublishedProjector = "multi_modal_projector.";
constexpr const char* kNewerProjector = "model.multi_modal_projector.";
constexpr const char* kPatchConv = "patch_conv.weight";

// What each format stores in place of a dense ".weight".
constexpr const char* kQuantizedWeightSuffixes[] = {".q_weight", ".qweight", ".trellis",
                                                    ".weight_packed"};

VisionTensorPrefixes find_pixtral_prefixes(const io::ModelTensors& tensors) {
  if (tensors.contains(std::string(kPublishedTower) + kPatchConv)) {
    return {kPublishedTower, kPublishedProjector};
  }
  if (tensors.contains(std::string(kNewerTower) + kPatchConv)) {
    return {kNewerTower, kNewerProjector};
  }
  throw ModelError(tensors.directory().string() +
                   ": config.json describes a Pixtral vision tower, but the files hold neither " +
                   kPublishedTower + kPatchConv + " nor " + kNewerTower + kPatchConv +
                   "; the download is incomplete, or holds only the language model");
}

std::string layer_prefix(const VisionTensorPrefixes& prefixes, int layer) {
  return prefixes.tower + "transformer.layers." + std::to_string(layer) + ".";
}

// Visits every tensor of the tower and projector with its expected shape, in
// the order the model runs them.
void for_each_pixtral_tensor(
    const Mistral3VisionConfig& config, const VisionTensorPrefixes& prefixes,
    const std::function<void(const std::string&, std::vector<std::int64_t>)>& f) {
  const PixtralConfig& c = config.tower;
  const std::int64_t width = c.hidden_size;
  const std::int64_t inner = c.intermediate_size;
  f(prefixes.tower + kPatchConv, {width, c.num_channels, c.patch_size, c.patch_size});
  f(prefixes.tower + "ln_pre.weight", {width});
  for (int i = 0; i < c.num_layers; ++i) {
    const std::string layer = layer_prefix(prefixes, i);
    f(layer + "attention_norm.weight", {width});
    for (const char* projection : {"q_proj", "k_proj", "v_proj", "o_proj"})
      f(layer + "attention." + projection + ".weight", {width, width});
    f(layer + "ffn_norm.weight", {width});
    f(layer + "feed_forward.gate_proj.weight", {inner, width});
    f(layer + "feed_forward.up_proj.weight", {inner, width});
    f(layer + "feed_forward.down_proj.weight", {width, inner});
  }
  const std::string& p = prefixes.projector;
  const std::int64_t merged = width * config.spatial_merge_size * config.spatial_merge_size;
  const std::int64_t text = config.text_hidden_size;
  f(p + "norm.weight", {width});
  f(p + "patch_merger.merging_layer.weight", {width, merged});
  f(p + "linear_1.weight", {text, width});
  if (config.projector_bias) f(p + "linear_1.bias", {text});
  f(p + "linear_2.weight", {text, text});
  if (config.projector_bias) f(p + "linear_2.bias", {text});
}

void require_present(const io::ModelTensors& tensors, const std::string& name) {
  if (tensors.contains(name)) return;
  const std::string where = tensors.directory().string() + ": ";
  if (name.ends_with(".weight")) {
    const std::string base = name.substr(0, name.size() - 7);
    for (const char* suffix : kQuantizedWeightSuffixes) {
      if (tensors.contains(base + suffix)) {
        throw ModelError(where + base + " is quantized (" + base + suffix +
                         "); Quire runs the vision tower from FP16, BF16 or FP32 weights, as "
                         "the published conversions keep it");
      }
    }
  }
  const bool bias = name.ends_with(".bias");
  throw ModelError(where + "the vision side has no tensor " + name +
                   (bias ? "; config.json's multimodal_projector_bias is true, but the files "
                           "hold no projector biases"
                         : "; the download is incomplete or does not match config.json's "
                           "vision_config"));
}

// Tensors the config says are not there mean it describes another model
// than the files hold: a layer beyond num_hidden_layers, or biases where
// multimodal_projector_bias is false (transformers would leave them unused).
void refuse_unexpected(const io::ModelTensors& tensors, const Mistral3VisionConfig& config,
                       const VisionTensorPrefixes& prefixes) {
  const std::string where = tensors.directory().string() + ": the files hold ";
  const std::string extra =
      layer_prefix(prefixes, config.tower.num_layers) + "attention_norm.weight";
  if (tensors.contains(extra)) {
    throw ModelError(where + extra + ", but vision_config.num_hidden_layers is " +
                     std::to_string(config.tower.num_layers) +
                     "; config.json does not match the vision tower's weights");
  }
  const std::string bias = prefixes.projector + "linear_1.bias";
  if (!config.projector_bias && tensors.contains(bias)) {
    throw ModelError(where + bias +
                     ", but config.json's multimodal_projector_bias is false (or absent); "
                     "config.json does not match the projector's weights");
  }
}

}  // namespace

VisionTensorSummary check_mistral3_vision_tensors(const io::ModelTensors& tensors,
                                                  const Mistral3VisionConfig& config) {
  VisionTensorSummary summary;
  summary.prefixes = find_pixtral_prefixes(tensors);
  for_each_pixtral_tensor(
      config, summary.prefixes, [&](const std::string& name, std::vector<std::int64_t> shape) {
        require_present(tensors, name);
        // Norms and biases (1-D) are widened to FP32.
        detail::count_tower_tensor(tensors, name, shape, shape.size() == 1, summary);
      });
  refuse_unexpected(tensors, config, summary.prefixes);
  summary.dtype = tensors.get(summary.prefixes.tower + kPatchConv).info->dtype;
  return summary;
}

Mistral3VisionWeights load_mistral3_vision_weights(const io::ModelTensors& tensors,
                                                   const Mistral3VisionConfig& config) {
  const VisionTensorPrefixes prefixes = check_mistral3_vision_tensors(tensors, config).prefixes;
  const detail::WeightReader read(tensors);
  Mistral3VisionWeights weights;
  PixtralWeights& tower = weights.tower;
  tower.patch_conv = read.linear(prefixes.tower + "patch_conv", false);
  tower.ln_pre = read.floats(prefixes.tower + "ln_pre.weight");
  for (int i = 0; i < config.feature_layers; ++i) {
    const std::string layer = layer_prefix(prefixes, i);
    PixtralLayerWeights& w = tower.layers.emplace_back();
    w.attention_norm = read.floats(layer + "attention_norm.weight");
    w.q = read.linear(layer + "attention.q_proj", false);
    w.k = read.linear(layer + "attention.k_proj", false);
    w.v = read.linear(layer + "attention.v_proj", false);
    w.o = read.linear(layer + "attention.o_proj", false);
    w.ffn_norm = read.floats(layer + "ffn_norm.weight");
    w.gate = read.linear(layer + "feed_forward.gate_proj", false);
    w.up = read.linear(layer + "feed_forward.up_proj", false);
    w.down = read.linear(layer + "feed_forward.down_proj", false);
  }
  const std::string& p = prefixes.projector;
  Mistral3ProjectorWeights& projector = weights.projector;
  projector.norm = read.floats(p + "norm.weight");
  projector.merging_layer = read.linear(p + "patch_merger.merging_layer", false);
  projector.linear_1 = read.linear(p + "linear_1", config.projector_bias);
  projector.linear_2 = read.linear(p + "linear_2", config.projector_bias);
  return weights;
}

}  // namespace quire::engine::vision
