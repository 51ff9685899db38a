#include "quire/engine/vision/pixtral_vision_config.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "config_key_reader.h"
#include "quire/engine/model_error.h"

namespace quire::engine::vision {
namespace {

using Json = nlohmann::json;

constexpr std::string_view kMistral3Multimodal = "Mistral3ForConditionalGeneration";

// Keys of config.json, read as the other towers' are (config_key_reader.h).
using Mistral3Keys = detail::ConfigKeyReader;

GateActivation gate_activation_of(const std::string& name, const Mistral3Keys& keys) {
  if (name == "silu" || name == "swish") return GateActivation::Silu;
  if (name == "gelu") return GateActivation::GeluErf;
  if (name == "gelu_pytorch_tanh" || name == "gelu_new") return GateActivation::GeluTanh;
  keys.fail("hidden_act", "is \"" + name +
                              "\"; Quire runs Pixtral towers with silu, gelu, gelu_pytorch_tanh "
                              "or gelu_new");
}

// rope_theta as older files write it, or inside rope_parameters as newer
// transformers saves it; PixtralVisionConfig's 10000 when neither is there.
double rope_theta_of(const Mistral3Keys& keys, const std::string& source) {
  if (const Json* parameters = keys.find("rope_parameters")) {
    const Mistral3Keys inner(*parameters, "vision_config.rope_parameters.", source);
    const std::string type = inner.string("rope_type", "default");
    if (type != "default") {
      inner.fail("rope_type", "is \"" + type + "\"; Pixtral's rotary embedding takes only default");
    }
    if (inner.find("rope_theta") != nullptr) return inner.positive("rope_theta", 10000.0);
  }
  return keys.positive("rope_theta", 10000.0);
}

PixtralConfig read_pixtral(const Json& object, const std::string& source) {
  const Mistral3Keys keys(object, "vision_config.", source);
  const std::string model_type = keys.string("model_type", "pixtral");
  if (model_type != "pixtral") {
    keys.fail("model_type", "is \"" + model_type +
                                "\"; Mistral 3's vision tower is Pixtral (model_type pixtral)");
  }
  PixtralConfig c;
  c.hidden_size = keys.integer("hidden_size", c.hidden_size, 1, 1 << 16);
  c.intermediate_size = keys.integer("intermediate_size", c.intermediate_size, 1, 1 << 18);
  c.num_layers = keys.integer("num_hidden_layers", c.num_layers, 1, 1024);
  c.num_heads = keys.integer("num_attention_heads", c.num_heads, 1, c.hidden_size);
  c.num_channels = keys.integer("num_channels", c.num_channels, 1, 16);
  c.image_size = keys.integer("image_size", c.image_size, 1, 1 << 15);
  c.patch_size = keys.integer("patch_size", c.patch_size, 1, c.image_size);
  c.rope_theta = rope_theta_of(keys, source);
  c.activation_name = keys.string("hidden_act", c.activation_name);
  c.activation = gate_activation_of(c.activation_name, keys);
  if (c.hidden_size % c.num_heads != 0) {
    keys.fail("num_attention_heads", "(" + std::to_string(c.num_heads) +
                                         ") does not divide hidden_size (" +
                                         std::to_string(c.hidden_size) + ")");
  }
  if (c.head_dim() % 2 != 0) {
    keys.fail("num_attention_heads",
              "gives heads of " + std::to_string(c.head_dim()) +
                  " values; the rotary embedding turns pairs, so a head must be even");
  }
  // transformers ignores head_dim and divides; a file that says otherwise
  // describes another tower than the one transformers would run.
  const int head_dim = keys.integer("head_dim", c.head_dim(), 1, c.hidden_size);
  if (head_dim != c.head_dim()) {
    keys.fail("head_dim", "(" + std::to_string(head_dim) + ") is not hidden_size / " +
                              "num_attention_heads (" + std::to_string(c.head_dim()) +
                              "), which Pixtral's attention uses");
  }
  return c;
}

// vision_feature_layer: hidden_states[i] is the output of the first i layers
// (0: ln_pre's output), and a negative i counts from the end, -1 being the
// last layer's output.
int feature_layers_of(const Mistral3Keys& top, int num_layers) {
  const Json* value = top.find("vision_feature_layer");
  if (value == nullptr) return num_layers;
  if (!value->is_number_integer()) {
    top.fail("vision_feature_layer",
             "is " + value->dump() +
                 "; Quire takes one layer's output (a whole number), not a list of layers");
  }
  const int layer = top.integer("vision_feature_layer", -1, -(num_layers + 1), num_layers);
  return layer >= 0 ? layer : num_layers + 1 + layer;
}

}  // namespace

std::optional<Mistral3VisionConfig> parse_mistral3_vision_config(std::string_view json,
                                                                 const std::string& source) {
  const std::optional<nlohmann::json> parsed =
      detail::multimodal_config(json, kMistral3Multimodal, source);
  if (!parsed) return std::nullopt;
  const nlohmann::json& root = *parsed;
  const nlohmann::json* vision = &root.at("vision_config");

  Mistral3VisionConfig config;
  config.tower = read_pixtral(*vision, source);
  const Mistral3Keys top(root, "", source);
  config.spatial_merge_size = top.integer("spatial_merge_size", config.spatial_merge_size, 1,
                                          config.tower.max_patches_per_side());
  config.projector_activation_name =
      top.string("projector_hidden_act", config.projector_activation_name);
  if (config.projector_activation_name == "gelu") {
    config.projector_activation = Gelu::Erf;
  } else if (config.projector_activation_name == "gelu_pytorch_tanh" ||
             config.projector_activation_name == "gelu_new") {
    config.projector_activation = Gelu::Tanh;
  } else {
    top.fail("projector_hidden_act",
             "is \"" + config.projector_activation_name +
                 "\"; Quire runs the Mistral 3 projector with gelu, gelu_pytorch_tanh or gelu_new");
  }
  config.projector_bias = top.boolean("multimodal_projector_bias", config.projector_bias);
  config.feature_layers = feature_layers_of(top, config.tower.num_layers);

  static const Json kNoTextConfig = Json::object();
  const auto text = root.find("text_config");
  const Mistral3Keys text_keys(text != root.end() ? *text : kNoTextConfig, "text_config.", source);
  config.text_hidden_size = text_keys.integer("hidden_size", config.text_hidden_size, 1, 1 << 17);
  config.text_rms_norm_eps = text_keys.positive("rms_norm_eps", config.text_rms_norm_eps);

  if (config.tower.image_size % config.token_pixels() != 0) {
    Mistral3Keys(*vision, "vision_config.", source)
        .fail("image_size", "(" + std::to_string(config.tower.image_size) +
                                ") is not a multiple of patch_size x spatial_merge_size (" +
                                std::to_string(config.token_pixels()) + ")");
  }
  return config;
}

std::optional<Mistral3VisionConfig> read_mistral3_vision_config(
    const std::filesystem::path& directory) {
  const std::filesystem::path path = directory / "config.json";
  std::ifstream file(path, std::ios::binary);
  if (!file) throw ModelError(path.string() + " cannot be read; is this a model directory?");
  std::ostringstream text;
  text << file.rdbuf();
  return parse_mistral3_vision_config(text.str(), path.string());
}

}  // namespace quire::engine::vision
