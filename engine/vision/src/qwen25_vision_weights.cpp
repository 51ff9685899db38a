#include "quire/engine/vision/qwen25_vision_weights.h"

#include <functional>
#include <string>

#include "quire/engine/model_error.h"
#include "weight_reader.h"

namespace quire::engine::vision {
namespace {

constexpr const char* kPublishedVisual = "visual.";
constexpr const char* kNewerVisual = "model.visual.";
constexpr const char* kPatchEmbed = "patch_embed.proj.weight";

VisionTensorPrefixes find_qwen_prefixes(const io::ModelTensors& tensors) {
  for (const char* prefix : {kPublishedVisual, kNewerVisual}) {
    if (tensors.contains(std::string(prefix) + kPatchEmbed))
      return {prefix, std::string(prefix) + "merger."};
  }
  throw ModelError(tensors.directory().string() + ": config.json describes a vision tower, but " +
                   "the files hold neither " + kPublishedVisual + kPatchEmbed + " nor " +
                   kNewerVisual + kPatchEmbed +
                   "; the download is incomplete, or holds only the language model");
}

// Visits every tensor of the tower and merger with its expected shape, in
// the order the model runs them.
void for_each_qwen_tensor(
    const Qwen25VisionConfig& c, const VisionTensorPrefixes& prefixes,
    const std::function<void(const std::string&, std::vector<std::int64_t>)>& f) {
  const std::int64_t width = c.hidden_size;
  const std::int64_t inner = c.intermediate_size;
  const std::string& t = prefixes.tower;
  f(t + kPatchEmbed, {width, c.in_channels, c.temporal_patch_size, c.patch_size, c.patch_size});
  for (int i = 0; i < c.depth; ++i) {
    const std::string block = t + "blocks." + std::to_string(i) + ".";
    f(block + "norm1.weight", {width});
    f(block + "attn.qkv.weight", {3 * width, width});
    f(block + "attn.qkv.bias", {3 * width});
    f(block + "attn.proj.weight", {width, width});
    f(block + "attn.proj.bias", {width});
    f(block + "norm2.weight", {width});
    for (const char* projection : {"gate_proj", "up_proj"}) {
      f(block + "mlp." + projection + ".weight", {inner, width});
      f(block + "mlp." + projection + ".bias", {inner});
    }
    f(block + "mlp.down_proj.weight", {width, inner});
    f(block + "mlp.down_proj.bias", {width});
  }
  const std::int64_t merged = width * c.merge_unit();
  const std::string& m = prefixes.projector;
  f(m + "ln_q.weight", {width});
  f(m + "mlp.0.weight", {merged, merged});
  f(m + "mlp.0.bias", {merged});
  f(m + "mlp.2.weight", {c.out_hidden_size, merged});
  f(m + "mlp.2.bias", {c.out_hidden_size});
}

}  // namespace

VisionTensorSummary check_qwen25_vision_tensors(const io::ModelTensors& tensors,
                                                const Qwen25VisionConfig& config) {
  using kernels::DType;
  VisionTensorSummary summary;
  summary.prefixes = find_qwen_prefixes(tensors);
  for_each_qwen_tensor(config, summary.prefixes,
                       [&](const std::string& name, std::vector<std::int64_t> shape) {
                         detail::check_tower_tensor_present(tensors, name);
                         const io::ModelTensors::Located located =
                             tensors.require(name, {DType::F16, DType::BF16, DType::F32}, shape);
                         const auto elements = static_cast<std::int64_t>(located.info->elements());
                         const auto bytes = static_cast<std::int64_t>(located.info->bytes);
                         summary.parameters += elements;
                         summary.bytes += bytes;
                         summary.memory_bytes += detail::loaded_bytes(shape, elements, bytes);
                       });
  // A block beyond vision_config's depth means the config describes another
  // tower than the files hold.
  const std::string extra =
      summary.prefixes.tower + "blocks." + std::to_string(config.depth) + ".norm1.weight";
  if (tensors.contains(extra)) {
    throw ModelError(tensors.directory().string() + ": the files hold " + extra +
                     ", but vision_config.depth is " + std::to_string(config.depth) +
                     "; config.json does not match the vision tower's weights");
  }
  summary.dtype = tensors.get(summary.prefixes.tower + kPatchEmbed).info->dtype;
  return summary;
}

Qwen25VisionWeights load_qwen25_vision_weights(const io::ModelTensors& tensors,
                                               const Qwen25VisionConfig& config) {
  const VisionTensorPrefixes prefixes = check_qwen25_vision_tensors(tensors, config).prefixes;
  const detail::WeightReader read(tensors);
  const std::string& t = prefixes.tower;
  Qwen25VisionWeights weights;
  weights.patch_embed = read.linear(t + "patch_embed.proj", false);
  for (int i = 0; i < config.depth; ++i) {
    const std::string block = t + "blocks." + std::to_string(i) + ".";
    Qwen25VisionBlockWeights& w = weights.blocks.emplace_back();
    w.norm1 = read.floats(block + "norm1.weight");
    w.qkv = read.linear(block + "attn.qkv");
    w.proj = read.linear(block + "attn.proj");
    w.norm2 = read.floats(block + "norm2.weight");
    w.gate = read.linear(block + "mlp.gate_proj");
    w.up = read.linear(block + "mlp.up_proj");
    w.down = read.linear(block + "mlp.down_proj");
  }
  const std::string& m = prefixes.projector;
  weights.merger.norm = read.floats(m + "ln_q.weight");
  weights.merger.fc1 = read.linear(m + "mlp.0");
  weights.merger.fc2 = read.linear(m + "mlp.2");
  return weights;
}

}  // namespace quire::engine::vision
