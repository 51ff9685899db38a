#include "quire/engine/vision/gemma3_vision_config.h"

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "config_key_reader.h"
#include "quire/engine/model_error.h"

namespace quire::engine::vision {
namespace {

using Json = nlohmann::json;

constexpr std::string_view kGemma3Multimodal = "Gemma3ForConditionalGeneration";

using KeyReader = detail::ConfigKeyReader;

Gelu activation_of(const std::string& name, const KeyReader& reader) {
  if (name == "gelu_pytorch_tanh" || name == "gelu_new") return Gelu::Tanh;
  if (name == "gelu") return Gelu::Erf;
  reader.fail("hidden_act", "is \"" + name +
                                "\"; Quire runs SigLIP towers with gelu_pytorch_tanh, gelu_new "
                                "or gelu");
}

// SiglipVisionConfig's defaults for what the file leaves out.
SiglipConfig read_tower(const Json& object, const std::string& source) {
  const KeyReader reader(object, "vision_config.", source);
  const std::string model_type = reader.string("model_type", "siglip_vision_model");
  if (model_type != "siglip_vision_model") {
    reader.fail("model_type", "is \"" + model_type +
                                  "\"; Gemma 3's vision tower is SigLIP (siglip_vision_model)");
  }
  SiglipConfig c;
  c.hidden_size = reader.integer("hidden_size", c.hidden_size, 1, 1 << 16);
  c.intermediate_size = reader.integer("intermediate_size", c.intermediate_size, 1, 1 << 18);
  c.num_layers = reader.integer("num_hidden_layers", c.num_layers, 1, 1024);
  c.num_heads = reader.integer("num_attention_heads", c.num_heads, 1, c.hidden_size);
  c.num_channels = reader.integer("num_channels", c.num_channels, 1, 16);
  c.image_size = reader.integer("image_size", c.image_size, 1, 1 << 14);
  c.patch_size = reader.integer("patch_size", c.patch_size, 1, c.image_size);
  c.layer_norm_eps = reader.number("layer_norm_eps", c.layer_norm_eps, 0.0, 1.0);
  c.activation_name = reader.string("hidden_act", c.activation_name);
  c.activation = activation_of(c.activation_name, reader);
  if (c.hidden_size % c.num_heads != 0) {
    reader.fail("num_attention_heads", "(" + std::to_string(c.num_heads) +
                                           ") does not divide hidden_size (" +
                                           std::to_string(c.hidden_size) + ")");
  }
  if (c.image_size % c.patch_size != 0) {
    reader.fail("image_size", "(" + std::to_string(c.image_size) +
                                  ") is not a multiple of patch_size (" +
                                  std::to_string(c.patch_size) + ")");
  }
  return c;
}

}  // namespace

int Gemma3VisionConfig::tokens_per_side() const {
  return static_cast<int>(std::lround(std::sqrt(static_cast<double>(tokens_per_image))));
}

std::optional<Gemma3VisionConfig> parse_gemma3_vision_config(std::string_view json,
                                                             const std::string& source) {
  const std::optional<nlohmann::json> parsed =
      detail::multimodal_config(json, kGemma3Multimodal, source);
  if (!parsed) return std::nullopt;
  const nlohmann::json& root = *parsed;
  const nlohmann::json* vision = &root.at("vision_config");

  Gemma3VisionConfig config;
  config.tower = read_tower(*vision, source);
  const KeyReader top(root, "", source);
  config.tokens_per_image =
      top.integer("mm_tokens_per_image", config.tokens_per_image, 1, config.tower.patches());
  static const Json kNoTextConfig = Json::object();
  const auto text = root.find("text_config");
  const KeyReader text_reader(text != root.end() ? *text : kNoTextConfig, "text_config.", source);
  config.text_hidden_size = text_reader.integer("hidden_size", config.text_hidden_size, 1, 1 << 17);

  const int side = config.tokens_per_side();
  const int patches_per_side = config.tower.patches_per_side();
  if (side * side != config.tokens_per_image || patches_per_side % side != 0) {
    top.fail("mm_tokens_per_image",
             "(" + std::to_string(config.tokens_per_image) +
                 ") must be the square of a number dividing the " +
                 std::to_string(patches_per_side) + " patches on a side (image_size " +
                 std::to_string(config.tower.image_size) + " / patch_size " +
                 std::to_string(config.tower.patch_size) + "), which are averaged into tokens");
  }
  return config;
}

std::optional<Gemma3VisionConfig> read_gemma3_vision_config(
    const std::filesystem::path& directory) {
  const std::filesystem::path path = directory / "config.json";
  std::ifstream file(path, std::ios::binary);
  if (!file) throw ModelError(path.string() + " cannot be read; is this a model directory?");
  std::ostringstream text;
  text << file.rdbuf();
  return parse_gemma3_vision_config(text.str(), path.string());
}

}  // namespace quire::engine::vision
