#include "quire/engine/model/model_config.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "quire/engine/model/architecture.h"
#include "quire/engine/model_error.h"

namespace quire::engine {
namespace {

using Json = nlohmann::json;

// Reads keys from the top level, falling back to "text_config".
class ConfigReader {
 public:
  ConfigReader(const Json& root, std::string source) : root_(root), source_(std::move(source)) {
    if (auto text = root.find("text_config"); text != root.end() && text->is_object()) {
      text_ = &*text;
    }
  }

  const Json* find(const char* key) const {
    if (auto it = root_.find(key); it != root_.end() && !it->is_null()) return &*it;
    if (text_) {
      if (auto it = text_->find(key); it != text_->end() && !it->is_null()) return &*it;
    }
    return nullptr;
  }

  [[noreturn]] void fail(const std::string& what) const { throw ModelError(source_ + ": " + what); }

  std::int64_t integer(const char* key, std::int64_t low, std::int64_t high) const {
    const Json* value = find(key);
    if (!value)
      fail("missing \"" + std::string(key) + "\"; is this a Hugging Face model directory?");
    return checked_integer(*value, key, low, high);
  }

  std::optional<std::int64_t> optional_integer(const char* key, std::int64_t low,
                                               std::int64_t high) const {
    const Json* value = find(key);
    if (!value) return std::nullopt;
    return checked_integer(*value, key, low, high);
  }

  double number(const char* key, double fallback, double low, double high) const {
    const Json* value = find(key);
    if (!value) return fallback;
    if (!value->is_number()) fail("\"" + std::string(key) + "\" must be a number");
    const double result = value->get<double>();
    if (!(result >= low && result <= high)) {
      fail("\"" + std::string(key) + "\" is " + value->dump() + ", outside [" +
           std::to_string(low) + ", " + std::to_string(high) + "]");
    }
    return result;
  }

  bool boolean(const char* key, bool fallback) const {
    const Json* value = find(key);
    if (!value) return fallback;
    if (!value->is_boolean()) fail("\"" + std::string(key) + "\" must be true or false");
    return value->get<bool>();
  }

  std::string string(const char* key) const {
    const Json* value = find(key);
    if (!value) return {};
    if (!value->is_string()) fail("\"" + std::string(key) + "\" must be a string");
    return value->get<std::string>();
  }

 private:
  std::int64_t checked_integer(const Json& value, const char* key, std::int64_t low,
                               std::int64_t high) const {
    if (!value.is_number_integer()) {
      fail("\"" + std::string(key) + "\" must be an integer, not " + value.dump());
    }
    const std::int64_t result = value.get<std::int64_t>();
    if (result < low || result > high) {
      fail("\"" + std::string(key) + "\" is " + std::to_string(result) + ", outside [" +
           std::to_string(low) + ", " + std::to_string(high) + "]");
    }
    return result;
  }

  const Json& root_;
  const Json* text_ = nullptr;
  std::string source_;
};

// The rotary types Quire computes, for messages.
constexpr const char* kSupportedRopeTypes = "default, linear, dynamic, llama3 and yarn";

RopeScaling parse_rope_scaling(const ConfigReader& reader) {
  RopeScaling scaling;
  const Json* value = reader.find("rope_scaling");
  if (!value) return scaling;
  if (!value->is_object()) reader.fail("\"rope_scaling\" must be an object or null");
  std::string type;
  for (const char* key : {"rope_type", "type"}) {
    if (auto it = value->find(key); it != value->end() && it->is_string()) {
      type = it->get<std::string>();
      break;
    }
  }
  const auto present = [&](const char* key) {
    auto it = value->find(key);
    return it != value->end() && !it->is_null();
  };
  auto number = [&](const char* key, double fallback) {
    auto it = value->find(key);
    if (it == value->end() || it->is_null()) return fallback;
    if (!it->is_number()) {
      reader.fail("rope_scaling \"" + std::string(key) + "\" must be a number, not " + it->dump());
    }
    return it->get<double>();
  };
  const auto require = [&](const char* key) {
    if (!present(key)) {
      reader.fail("rope_scaling of type \"" + type + "\" needs \"" + std::string(key) + "\"");
    }
    return number(key, 0.0);
  };
  scaling.factor = number("factor", 1.0);
  if (type == "default" || type.empty()) return scaling;
  if (!(scaling.factor >= 1.0)) {
    reader.fail("rope_scaling \"factor\" is " + value->at("factor").dump() +
                "; it must be at least 1");
  }
  if (type == "linear") {
    scaling.type = RopeScaling::Type::Linear;
  } else if (type == "dynamic") {
    scaling.type = RopeScaling::Type::Dynamic;
  } else if (type == "llama3") {
    scaling.type = RopeScaling::Type::Llama3;
    scaling.factor = require("factor");
    scaling.low_freq_factor = require("low_freq_factor");
    scaling.high_freq_factor = require("high_freq_factor");
    scaling.original_max_position_embeddings =
        static_cast<std::int64_t>(require("original_max_position_embeddings"));
    if (!(scaling.high_freq_factor > scaling.low_freq_factor) || !(scaling.low_freq_factor > 0.0)) {
      reader.fail("rope_scaling high_freq_factor (" + std::to_string(scaling.high_freq_factor) +
                  ") must exceed low_freq_factor (" + std::to_string(scaling.low_freq_factor) +
                  "), and both must be positive");
    }
    if (scaling.original_max_position_embeddings < 1) {
      reader.fail("rope_scaling original_max_position_embeddings must be positive");
    }
  } else if (type == "yarn") {
    scaling.type = RopeScaling::Type::Yarn;
    scaling.factor = require("factor");
    // As transformers reads them: an absent, null or zero beta takes the
    // default, and mscale applies only with mscale_all_dim.
    if (const double beta = number("beta_fast", 0.0); beta != 0.0) scaling.beta_fast = beta;
    if (const double beta = number("beta_slow", 0.0); beta != 0.0) scaling.beta_slow = beta;
    if (!(scaling.beta_fast > 0.0 && scaling.beta_slow > 0.0)) {
      reader.fail("rope_scaling beta_fast and beta_slow must be positive");
    }
    if (present("attention_factor")) scaling.attention_factor = number("attention_factor", 1.0);
    scaling.mscale = number("mscale", 0.0);
    scaling.mscale_all_dim = number("mscale_all_dim", 0.0);
    if (present("truncate")) {
      if (!value->at("truncate").is_boolean()) {
        reader.fail("rope_scaling \"truncate\" must be true or false");
      }
      scaling.truncate = value->at("truncate").get<bool>();
    }
    if (present("original_max_position_embeddings")) {
      scaling.original_max_position_embeddings =
          static_cast<std::int64_t>(number("original_max_position_embeddings", 0.0));
      if (scaling.original_max_position_embeddings < 1) {
        reader.fail("rope_scaling original_max_position_embeddings must be positive");
      }
    }
  } else if (type == "longrope" || type == "su") {
    reader.fail("rope_scaling type \"" + type +
                "\" (Phi-3's long-context scaling) is not supported yet; Quire runs " +
                kSupportedRopeTypes + " scaling");
  } else {
    reader.fail("rope_scaling type \"" + type + "\" is not supported; Quire runs " +
                kSupportedRopeTypes + " scaling");
  }
  return scaling;
}

}  // namespace

int ModelConfig::rotary_dim() const {
  const int dim = static_cast<int>(head_dim * partial_rotary_factor);
  return dim - dim % 2;
}

ModelConfig parse_model_config(const std::string& json_text, const std::string& source) {
  Json root;
  try {
    root = Json::parse(json_text);
  } catch (const Json::exception& error) {
    throw ModelError(source + " is not valid JSON (" + error.what() + ")");
  }
  if (!root.is_object()) throw ModelError(source + " must hold a JSON object");
  const ConfigReader reader(root, source);

  ModelConfig config;
  if (const Json* list = reader.find("architectures");
      list && list->is_array() && !list->empty() && (*list)[0].is_string()) {
    config.architecture = (*list)[0].get<std::string>();
  } else {
    reader.fail(
        "missing \"architectures\" (a list naming the model class, such as "
        "[\"LlamaForCausalLM\"])");
  }
  constexpr std::int64_t kBig = std::int64_t{1} << 40;
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
  config.rope_scaling = parse_rope_scaling(reader);
  config.max_position_embeddings =
      reader.optional_integer("max_position_embeddings", 1, kBig).value_or(4096);
  RopeScaling& scaling = config.rope_scaling;
  if (scaling.type == RopeScaling::Type::Dynamic ||
      (scaling.type == RopeScaling::Type::Yarn && scaling.original_max_position_embeddings == 0)) {
    scaling.original_max_position_embeddings = config.max_position_embeddings;
  }
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
  config.torch_dtype = reader.string("torch_dtype");
  if (const Json* quantization = reader.find("quantization_config");
      quantization && quantization->is_object()) {
    config.quantization.method = quantization->value("quant_method", std::string());
    config.quantization.checkpoint_format = quantization->value("checkpoint_format", std::string());
  }

  if (config.num_heads % config.num_kv_heads != 0) {
    reader.fail("num_attention_heads (" + std::to_string(config.num_heads) +
                ") is not a multiple of num_key_value_heads (" +
                std::to_string(config.num_kv_heads) + ")");
  }
  if (config.head_dim % 2 != 0) reader.fail("head_dim must be even for rotary embeddings");
  if (!config.layer_types.empty() &&
      config.layer_types.size() != static_cast<std::size_t>(config.num_layers)) {
    reader.fail("\"layer_types\" lists " + std::to_string(config.layer_types.size()) +
                " layers but num_hidden_layers is " + std::to_string(config.num_layers));
  }
  config.sliding_windows.assign(static_cast<std::size_t>(config.num_layers), 0);
  const Architecture* architecture = nullptr;
  try {
    architecture = &find_architecture(config);
  } catch (const ModelError& error) {
    reader.fail(error.what());
  }
  architecture->apply(config);
  return config;
}

ModelConfig load_model_config(const std::filesystem::path& model_dir) {
  const std::filesystem::path path = model_dir / "config.json";
  std::ifstream file(path);
  if (!file) {
    throw ModelError("no config.json in " + model_dir.string() +
                     "; choose a Hugging Face model directory (config.json, *.safetensors and "
                     "tokenizer.model)");
  }
  std::ostringstream text;
  text << file.rdbuf();
  return parse_model_config(text.str(), path.string());
}

}  // namespace quire::engine
