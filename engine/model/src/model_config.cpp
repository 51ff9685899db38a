#include "quire/engine/model/model_config.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "config_reader.h"
#include "quire/engine/model/architecture.h"
#include "quire/engine/model_error.h"

namespace quire::engine {
namespace {

using detail::ConfigReader;
using detail::Json;

}  // namespace

int ModelConfig::rotary_dim() const {
  const int dim = static_cast<int>(head_dim * partial_rotary_factor);
  return dim - dim % 2;
}

double ModelConfig::attention_scale() const {
  return 1.0 / std::sqrt(query_pre_attn_scalar.value_or(static_cast<double>(head_dim)));
}

int ModelConfig::binding_window(std::size_t layer) const {
  const int window = sliding_windows.at(layer);
  return max_position_embeddings > 0 && window >= max_position_embeddings ? 0 : window;
}

int ModelConfig::uniform_sliding_window() const {
  if (sliding_windows.empty()) return 0;
  const int first = binding_window(0);
  for (std::size_t layer = 1; layer < sliding_windows.size(); ++layer) {
    if (binding_window(layer) != first) return 0;
  }
  return first;
}

namespace {

constexpr std::int64_t kBig = std::int64_t{1} << 40;

Activation parse_activation(const ConfigReader& reader) {
  // Gemma names it "hidden_activation" (and may keep an older "hidden_act").
  const char* key = reader.find("hidden_activation") ? "hidden_activation" : "hidden_act";
  const std::string name = reader.string(key);
  if (name.empty() || name == "silu" || name == "swish") return Activation::Silu;
  if (name == "gelu_pytorch_tanh" || name == "gelu_new") return Activation::GeluTanh;
  reader.fail("\"" + std::string(key) + "\" is \"" + name +
              "\"; Quire's gated MLPs run silu and gelu_pytorch_tanh");
}

// A soft cap: null, absent or 0 mean none.
double parse_softcap(const ConfigReader& reader, const char* key) {
  return reader.number(key, 0.0, 0.0, 1e9);
}

void parse_experts(const ConfigReader& reader, ModelConfig& config) {
  MixtureOfExperts& moe = config.moe;
  const char* experts_key = reader.find("num_local_experts") ? "num_local_experts" : "num_experts";
  moe.experts = static_cast<int>(reader.optional_integer(experts_key, 0, 65536).value_or(0));
  if (moe.experts == 0) return;
  moe.experts_per_token = static_cast<int>(reader.integer("num_experts_per_tok", 1, 65536));
  if (moe.experts_per_token > moe.experts) {
    reader.fail("\"num_experts_per_tok\" (" + std::to_string(moe.experts_per_token) +
                ") is larger than the " + std::to_string(moe.experts) + " experts (\"" +
                experts_key + "\"); a token cannot choose more experts than there are");
  }
  moe.intermediate_size =
      reader.optional_integer("moe_intermediate_size", 1, kBig).value_or(config.intermediate_size);
  moe.normalize_top_k = reader.boolean("norm_topk_prob", true);
  moe.sparse_step =
      static_cast<int>(reader.optional_integer("decoder_sparse_step", 1, 4096).value_or(1));
  if (const Json* layers = reader.find("mlp_only_layers")) {
    if (!layers->is_array()) reader.fail("\"mlp_only_layers\" must be a list of layer indices");
    for (const Json& layer : *layers) {
      if (!layer.is_number_integer() || layer.get<int>() < 0 ||
          layer.get<int>() >= config.num_layers) {
        reader.fail("\"mlp_only_layers\" lists " + layer.dump() + "; layers run from 0 to " +
                    std::to_string(config.num_layers - 1));
      }
      moe.dense_layers.push_back(layer.get<int>());
    }
  }
}

void check_rope(const ConfigReader& reader, ModelConfig& config) {
  RopeScaling& scaling = config.rope_scaling;
  if (!scaling.mrope_section.empty()) {
    const auto& section = scaling.mrope_section;
    if (section[0] + section[1] + section[2] != config.rotary_dim() / 2) {
      reader.fail("rope_scaling \"mrope_section\" [" + std::to_string(section[0]) + ", " +
                  std::to_string(section[1]) + ", " + std::to_string(section[2]) +
                  "] must add up to the " + std::to_string(config.rotary_dim() / 2) +
                  " rotary frequencies of head_dim " + std::to_string(config.head_dim));
    }
  }
  if (scaling.type == RopeScaling::Type::Dynamic ||
      (scaling.type == RopeScaling::Type::Yarn && scaling.original_max_position_embeddings == 0)) {
    scaling.original_max_position_embeddings = config.max_position_embeddings;
  }
  if (scaling.type != RopeScaling::Type::LongRope) return;
  if (scaling.original_max_position_embeddings == 0) {
    scaling.original_max_position_embeddings = config.max_position_embeddings;
  }
  if (scaling.factor_from_positions) {
    scaling.factor = static_cast<double>(config.max_position_embeddings) /
                     static_cast<double>(scaling.original_max_position_embeddings);
  }
  const auto frequencies = static_cast<std::size_t>(config.rotary_dim() / 2);
  for (const auto* list : {&scaling.short_factor, &scaling.long_factor}) {
    if (list->size() != frequencies) {
      reader.fail("rope_scaling lists " + std::to_string(list->size()) + " " +
                  (list == &scaling.short_factor ? "short_factor" : "long_factor") +
                  " values, but the rotary dimension " + std::to_string(config.rotary_dim()) +
                  " has " + std::to_string(frequencies) + " frequencies");
    }
  }
}

}  // namespace

ModelConfig parse_model_config(const std::string& json_text, const std::string& source) {
  Json root;
  try {
    root = Json::parse(json_text);
  } catch (const Json::exception& error) {
    throw ModelError(source + " is not valid JSON (" + error.what() + ")");
  }
  if (!root.is_object()) throw ModelError(source + " must hold a JSON object");
  ConfigReader reader(root, source);

  ModelConfig config;
  if (const Json* list = reader.find("architectures");
      list && list->is_array() && !list->empty() && (*list)[0].is_string()) {
    config.architecture = (*list)[0].get<std::string>();
  } else {
    reader.fail(
        "missing \"architectures\" (a list naming the model class, such as "
        "[\"LlamaForCausalLM\"])");
  }
  config.model_type = reader.string("model_type");
  // The architecture first: its configuration class's defaults fill in
  // what the file leaves out.
  const Architecture* architecture = nullptr;
  try {
    architecture = &find_architecture(config);
  } catch (const ModelError& error) {
    reader.fail(error.what());
  }
  if (!architecture->text_model_types.empty()) {
    const auto text = root.find("text_config");
    const std::string type = text != root.end() && text->is_object() && text->contains("model_type")
                                 ? text->value("model_type", std::string())
                                 : architecture->text_model_types.front();
    if (std::find(architecture->text_model_types.begin(), architecture->text_model_types.end(),
                  type) == architecture->text_model_types.end()) {
      reader.fail("text_config.model_type \"" + type + "\" is not a language model Quire runs in " +
                  std::string(architecture->name) + " (it runs \"" +
                  architecture->text_model_types.front() +
                  "\": " + std::string(architecture->label) + ")");
    }
  }
  const Json defaults = Json::parse(architecture->defaults);
  reader.set_defaults(&defaults);

  config.hidden_size = reader.integer("hidden_size", 1, 1 << 20);
  config.num_layers = static_cast<int>(reader.integer("num_hidden_layers", 1, 4096));
  config.num_heads = static_cast<int>(reader.integer("num_attention_heads", 1, 4096));
  config.num_kv_heads = static_cast<int>(
      reader.optional_integer("num_key_value_heads", 1, 4096).value_or(config.num_heads));
  const std::int64_t default_head_dim = config.hidden_size / config.num_heads;
  config.head_dim =
      static_cast<int>(reader.optional_integer("head_dim", 1, 4096).value_or(default_head_dim));
  config.intermediate_size = reader.integer("intermediate_size", 1, kBig);
  config.vocab_size = reader.integer("vocab_size", 1, std::int64_t{1} << 31);
  config.rms_norm_eps = reader.number("rms_norm_eps", 1e-6, 0.0, 1.0);
  config.rope_theta = reader.number("rope_theta", 10000.0, 1.0, 1e12);
  config.partial_rotary_factor = reader.number("partial_rotary_factor", 1.0, 0.0, 1.0);
  config.rope_scaling = detail::parse_rope_scaling(reader);
  config.max_position_embeddings =
      reader.optional_integer("max_position_embeddings", 1, kBig).value_or(4096);
  config.sliding_window = reader.optional_integer("sliding_window", 1, kBig);
  if (const Json* value = reader.find("use_sliding_window")) {
    if (!value->is_boolean()) reader.fail("\"use_sliding_window\" must be true or false");
    config.use_sliding_window = value->get<bool>();
  }
  if (auto layers = reader.optional_integer("max_window_layers", 0, 4096)) {
    config.max_window_layers = static_cast<int>(*layers);
  }
  if (const Json* types = reader.find("layer_types")) {
    if (!types->is_array()) reader.fail("\"layer_types\" must be a list");
    for (const Json& type : *types) {
      if (!type.is_string()) reader.fail("\"layer_types\" must list strings");
      config.layer_types.push_back(type.get<std::string>());
    }
  }
  config.tie_word_embeddings = reader.boolean("tie_word_embeddings", false);
  config.attention_bias = reader.boolean("attention_bias", false);
  config.mlp_bias = reader.boolean("mlp_bias", false);
  config.activation = parse_activation(reader);
  config.query_pre_attn_scalar = reader.optional_number("query_pre_attn_scalar", 1e-6, 1e9);
  config.attention_softcap = parse_softcap(reader, "attn_logit_softcapping");
  config.final_softcap = parse_softcap(reader, "final_logit_softcapping");
  config.rope_local_theta = reader.optional_number("rope_local_base_freq", 1.0, 1e12);
  if (auto pattern = reader.optional_integer("sliding_window_pattern", 1, 4096)) {
    config.sliding_window_pattern = static_cast<int>(*pattern);
  }
  parse_experts(reader, config);
  config.torch_dtype = reader.string("torch_dtype");
  if (const Json* quantization = reader.find("quantization_config");
      quantization && quantization->is_object()) {
    detail::parse_quantization(reader, *quantization, config.quantization);
  }

  if (config.num_heads % config.num_kv_heads != 0) {
    reader.fail("num_attention_heads (" + std::to_string(config.num_heads) +
                ") is not a multiple of num_key_value_heads (" +
                std::to_string(config.num_kv_heads) + ")");
  }
  if (config.head_dim % 2 != 0) reader.fail("head_dim must be even for rotary embeddings");
  if (config.rotary_dim() < 2) {
    reader.fail("\"partial_rotary_factor\" " + std::to_string(config.partial_rotary_factor) +
                " leaves no rotary dimensions of head_dim " + std::to_string(config.head_dim));
  }
  check_rope(reader, config);
  if (!config.layer_types.empty() &&
      config.layer_types.size() != static_cast<std::size_t>(config.num_layers)) {
    reader.fail("\"layer_types\" lists " + std::to_string(config.layer_types.size()) +
                " layers but num_hidden_layers is " + std::to_string(config.num_layers));
  }
  config.sliding_windows.assign(static_cast<std::size_t>(config.num_layers), 0);
  architecture->apply(config);
  return config;
}

ModelConfig load_model_config(const std::filesystem::path& model_dir) {
  const std::filesystem::path path = model_dir / "config.json";
  std::ifstream file(path);
  if (!file) {
    throw ModelError("no config.json in " + model_dir.string() +
                     "; choose a Hugging Face model directory (config.json, *.safetensors weights "
                     "and a tokenizer: tokenizer.json or tokenizer.model)");
  }
  std::ostringstream text;
  text << file.rdbuf();
  return parse_model_config(text.str(), path.string());
}

}  // namespace quire::engine
