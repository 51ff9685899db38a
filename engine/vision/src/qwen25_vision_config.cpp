#include "quire/engine/vision/qwen25_vision_config.h"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "config_key_reader.h"
#include "quire/engine/model_error.h"

namespace quire::engine::vision {
namespace {

using QwenJson = nlohmann::json;
using QwenKeys = detail::ConfigKeyReader;

constexpr std::string_view kQwen25Multimodal = "Qwen2_5_VLForConditionalGeneration";

QwenVisionActivation qwen_activation_of(const std::string& name, const QwenKeys& reader) {
  if (name == "silu" || name == "swish") return QwenVisionActivation::Silu;
  if (name == "gelu_pytorch_tanh" || name == "gelu_new") return QwenVisionActivation::GeluTanh;
  if (name == "gelu") return QwenVisionActivation::GeluErf;
  reader.fail("hidden_act", "is \"" + name +
                                "\"; Quire runs Qwen2.5-VL towers with silu, gelu, "
                                "gelu_pytorch_tanh or gelu_new");
}

std::vector<int> full_attention_blocks(const QwenKeys& reader, int depth) {
  const QwenJson* value = reader.find("fullatt_block_indexes");
  if (value == nullptr) return Qwen25VisionConfig{}.fullatt_block_indexes;
  if (!value->is_array()) reader.fail("fullatt_block_indexes", "must be a list of block numbers");
  std::vector<int> blocks;
  for (const QwenJson& block : *value) {
    if (!block.is_number_integer() || block < 0 || block >= depth) {
      reader.fail("fullatt_block_indexes", "holds " + block.dump() +
                                               ", which is not a block from 0 to depth - 1 (" +
                                               std::to_string(depth - 1) + ")");
    }
    blocks.push_back(block.get<int>());
  }
  return blocks;
}

Qwen25VisionConfig read_qwen_tower(const QwenJson& object, const std::string& source) {
  const QwenKeys reader(object, "vision_config.", source);
  Qwen25VisionConfig c;
  c.depth = reader.integer("depth", c.depth, 1, 1024);
  c.hidden_size = reader.integer("hidden_size", c.hidden_size, 1, 1 << 16);
  c.intermediate_size = reader.integer("intermediate_size", c.intermediate_size, 1, 1 << 18);
  c.num_heads = reader.integer("num_heads", c.num_heads, 1, c.hidden_size);
  // transformers reads in_channels; the older in_chans that published files
  // also write is not read by Qwen2_5_VLVisionConfig.
  c.in_channels = reader.integer("in_channels", c.in_channels, 1, 16);
  c.patch_size = reader.integer("patch_size", c.patch_size, 1, 1024);
  c.spatial_merge_size = reader.integer("spatial_merge_size", c.spatial_merge_size, 1, 64);
  c.temporal_patch_size = reader.integer("temporal_patch_size", c.temporal_patch_size, 1, 64);
  c.window_size = reader.integer("window_size", c.window_size, 1, 1 << 16);
  c.out_hidden_size = reader.integer("out_hidden_size", c.out_hidden_size, 1, 1 << 17);
  c.fullatt_block_indexes = full_attention_blocks(reader, c.depth);
  c.activation_name = reader.string("hidden_act", c.activation_name);
  c.activation = qwen_activation_of(c.activation_name, reader);
  if (c.hidden_size % c.num_heads != 0 || c.head_dim() % 4 != 0) {
    reader.fail("num_heads", "(" + std::to_string(c.num_heads) + ") must divide hidden_size (" +
                                 std::to_string(c.hidden_size) +
                                 ") into heads whose width is a multiple of 4, as the tower's 2D "
                                 "rotary embedding needs");
  }
  // transformers floors window_size / merge / patch; below one merged
  // token it would divide by zero.
  const int merged_patch = c.patch_size * c.spatial_merge_size;
  if (c.window_size < merged_patch) {
    reader.fail("window_size", "(" + std::to_string(c.window_size) +
                                   ") must be at least patch_size x spatial_merge_size (" +
                                   std::to_string(merged_patch) + ")");
  }
  return c;
}

}  // namespace

bool Qwen25VisionConfig::full_attention(int block) const {
  return std::find(fullatt_block_indexes.begin(), fullatt_block_indexes.end(), block) !=
         fullatt_block_indexes.end();
}

std::optional<Qwen25VisionConfig> parse_qwen25_vision_config(std::string_view json,
                                                             const std::string& source) {
  const std::optional<nlohmann::json> parsed =
      detail::multimodal_config(json, kQwen25Multimodal, source);
  if (!parsed) return std::nullopt;
  const nlohmann::json& root = *parsed;
  const nlohmann::json* vision = &root.at("vision_config");
  Qwen25VisionConfig config = read_qwen_tower(*vision, source);

  // The language model's width: at the top level as published, under
  // text_config as newer transformers save it.
  const auto text = root.find("text_config");
  const bool nested = text != root.end() && text->is_object() && text->contains("hidden_size");
  const QwenKeys text_reader(nested ? *text : root, nested ? "text_config." : "", source);
  const int text_hidden = text_reader.integer("hidden_size", 0, 0, 1 << 17);
  if (text_hidden != 0 && text_hidden != config.out_hidden_size) {
    const QwenKeys reader(*vision, "vision_config.", source);
    reader.fail("out_hidden_size", "(" + std::to_string(config.out_hidden_size) +
                                       ") is not the language model's hidden_size (" +
                                       std::to_string(text_hidden) +
                                       "), which the patch merger's output must match");
  }
  return config;
}

std::optional<Qwen25VisionConfig> read_qwen25_vision_config(
    const std::filesystem::path& directory) {
  const std::filesystem::path path = directory / "config.json";
  std::ifstream file(path, std::ios::binary);
  if (!file) throw ModelError(path.string() + " cannot be read; is this a model directory?");
  std::ostringstream text;
  text << file.rdbuf();
  return parse_qwen25_vision_config(text.str(), path.string());
}

}  // namespace quire::engine::vision
