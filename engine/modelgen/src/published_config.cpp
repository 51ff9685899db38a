// Reading a published config.json into a spec (--config-from); writing it
// back is published_config_writer.cpp.

#include "quire/engine/modelgen/published_config.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <sstream>

#include "spec_text.h"

namespace quire::engine::modelgen {
namespace {

using Json = nlohmann::ordered_json;
using detail::reject;

struct Family {
  std::string_view class_name;
  std::string_view architecture;
  bool multimodal = false;
};

constexpr std::array<Family, 10> kFamilies = {{{"LlamaForCausalLM", "llama"},
                                               {"MistralForCausalLM", "mistral"},
                                               {"Qwen2ForCausalLM", "qwen2"},
                                               {"Qwen3ForCausalLM", "qwen3"},
                                               {"Gemma2ForCausalLM", "gemma2"},
                                               {"Gemma3ForCausalLM", "gemma3"},
                                               {"Gemma3ForConditionalGeneration", "gemma3", true},
                                               {"Phi3ForCausalLM", "phi3"},
                                               {"MixtralForCausalLM", "mixtral"},
                                               {"Qwen3MoeForCausalLM", "qwen3_moe"}}};

// The keys of one JSON object, typed, with transformers' default where a
// key is absent or null.
class Keys {
 public:
  Keys(const Json& object, const std::string& source) : object_(object), source_(source) {}

  const Json* find(const char* key) const {
    const auto found = object_.find(key);
    return found == object_.end() ? nullptr : &*found;
  }
  bool present(const char* key) const { return find(key) != nullptr; }
  bool null(const char* key) const {
    const Json* value = find(key);
    return value == nullptr || value->is_null();
  }

  double number(const char* key, double fallback) const {
    const Json* value = find(key);
    if (value == nullptr || value->is_null()) return fallback;
    if (!value->is_number()) fail(key, "a number");
    return value->get<double>();
  }
  std::int64_t integer(const char* key, std::int64_t fallback) const {
    const double value = number(key, static_cast<double>(fallback));
    if (value != std::floor(value) || std::fabs(value) > 1e15) fail(key, "a whole number");
    return static_cast<std::int64_t>(value);
  }
  int small(const char* key, int fallback) const {
    const std::int64_t value = integer(key, fallback);
    if (value < 0 || value > (std::int64_t{1} << 30)) fail(key, "a count");
    return static_cast<int>(value);
  }
  bool boolean(const char* key, bool fallback) const {
    const Json* value = find(key);
    if (value == nullptr || value->is_null()) return fallback;
    if (!value->is_boolean()) fail(key, "true or false");
    return value->get<bool>();
  }
  std::string text(const char* key) const {
    const Json* value = find(key);
    if (value == nullptr || value->is_null()) return {};
    if (!value->is_string()) fail(key, "a string");
    return value->get<std::string>();
  }

  [[noreturn]] void fail(const char* key, const char* what) const {
    reject("config_from", source_ + ": \"" + key + "\" is not " + what);
  }

 private:
  const Json& object_;
  const std::string& source_;
};

std::string read_text(const std::filesystem::path& file) {
  std::ifstream stream(file, std::ios::binary);
  if (!stream) reject("config_from", "cannot read " + file.string());
  std::ostringstream text;
  text << stream.rdbuf();
  return text.str();
}

const Family& family_of(const Json& root, const std::string& source) {
  const auto classes = root.find("architectures");
  if (classes == root.end() || !classes->is_array() || classes->empty() ||
      !classes->front().is_string()) {
    reject("config_from", source + " has no \"architectures\" naming the model class");
  }
  const std::string name = classes->front().get<std::string>();
  for (const Family& family : kFamilies) {
    if (family.class_name == name) return family;
  }
  std::string known;
  for (const Family& family : kFamilies)
    known += (known.empty() ? "" : ", ") + std::string(family.class_name);
  reject("config_from",
         source + " names " + name + ", which make-model does not write; it writes " + known);
}

int round_to_32(double value, int least) {
  return std::max(least, static_cast<int>(std::lround(value / 32.0)) * 32);
}

// The published shapes, with transformers' defaults for absent keys.
struct Shapes {
  double hidden = 0;
  int layers = 0;
  int heads = 0;
  int kv_heads = 0;
  int head_dim = 0;
  bool head_dim_written = false;
  double intermediate = 0;
};

Shapes published_shapes(const Keys& keys, const RandomModelSpec& spec, bool gemma3_defaults) {
  Shapes shapes;
  // Gemma3TextConfig's defaults: gemma-3-4b-it's text_config leaves most to them.
  shapes.hidden = keys.number("hidden_size", gemma3_defaults ? 2304 : 4096);
  shapes.layers = keys.small("num_hidden_layers", gemma3_defaults ? 26 : 32);
  shapes.heads = std::max(1, keys.small("num_attention_heads", gemma3_defaults ? 8 : 32));
  shapes.kv_heads =
      std::max(1, keys.small("num_key_value_heads", gemma3_defaults ? 4 : shapes.heads));
  shapes.head_dim_written = !keys.null("head_dim");
  const bool gemma = spec.architecture == "gemma2" || spec.architecture == "gemma3";
  const int derived = static_cast<int>(shapes.hidden) / shapes.heads;
  shapes.head_dim = std::max(1, keys.small("head_dim", gemma ? 256 : derived));
  shapes.intermediate =
      keys.number("intermediate_size", gemma3_defaults ? 9216 : 4 * shapes.hidden);
  return shapes;
}

// Small shapes in the published proportions (see published_config.h).
void scale_down(const Keys& keys, const Shapes& real, RandomModelSpec& spec) {
  const int group = std::max(1, real.heads / real.kv_heads);
  spec.kv_heads = std::max(1, std::min(real.kv_heads, 4 / group));
  spec.heads = spec.kv_heads * group;
  const int head_dim = real.head_dim >= 128 ? 64 : 32;
  const double attention = double(real.heads) * real.head_dim;
  const bool derived = !real.head_dim_written || spec.architecture == "phi3";
  spec.head_dim = derived ? 0 : head_dim;
  spec.hidden = derived ? spec.heads * head_dim
                        : round_to_32(real.hidden * spec.heads * head_dim / attention, 64);
  const double scale = spec.hidden / real.hidden;
  spec.intermediate = round_to_32(real.intermediate * scale, 32);
  spec.layers = std::min(real.layers, 2);
  if (spec.architecture == "gemma3") {
    // A whole pattern, so that a full-attention layer follows the sliding ones.
    spec.layers = std::min(real.layers, std::max(2, spec.resolved_sliding_window_pattern()));
  }
  if (spec.architecture == "qwen3_moe") {
    spec.moe.expert_intermediate =
        round_to_32(keys.number("moe_intermediate_size", 768) * scale, 32);
    std::erase_if(spec.moe.mlp_only_layers, [&](int layer) { return layer >= spec.layers; });
  }
  if (spec.architecture == "mixtral" || spec.architecture == "qwen3_moe") {
    spec.moe.experts = std::min(spec.moe.experts, std::max(4, 2 * spec.moe.experts_per_token));
  }
  // GPTQ groups no wider than the narrowest small input.
  int narrowest = std::min(spec.hidden, spec.intermediate);
  if (spec.architecture == "qwen3_moe")
    narrowest = std::min(narrowest, spec.moe.expert_intermediate);
  while (spec.gptq_group_size > narrowest)
    spec.gptq_group_size /= 2;
}

RopeScalingSpec rope_scaling_of(const Keys& keys, const Keys& root, const std::string& source) {
  using Type = RopeScalingSpec::Type;
  const Json* object = keys.find("rope_scaling");
  if (object == nullptr || object->is_null()) return {};
  if (!object->is_object()) keys.fail("rope_scaling", "an object");
  const Keys scaling(*object, source);
  std::string type = scaling.text("rope_type");
  if (type.empty()) type = scaling.text("type");
  RopeScalingSpec spec;
  spec.factor = scaling.number("factor", 1.0);
  if (type == "default" || type.empty()) return {};
  if (type == "linear") {
    spec.type = Type::Linear;
  } else if (type == "dynamic") {
    spec.type = Type::Dynamic;
  } else if (type == "llama3") {
    spec.type = Type::Llama3;
    spec.low_freq_factor = scaling.number("low_freq_factor", 1.0);
    spec.high_freq_factor = scaling.number("high_freq_factor", 4.0);
    spec.original_max_position_embeddings =
        scaling.integer("original_max_position_embeddings", 8192);
  } else if (type == "yarn") {
    spec.type = Type::Yarn;
    spec.original_max_position_embeddings = scaling.integer("original_max_position_embeddings", 0);
  } else if (type == "longrope" || type == "su") {
    // Phi-3 names the trained context beside rope_scaling.
    spec = {Type::LongRope, 1.0};
    spec.original_max_position_embeddings = scaling.integer(
        "original_max_position_embeddings", root.integer("original_max_position_embeddings", 4096));
  } else {
    reject("config_from",
           source + ": rope_scaling type \"" + type + "\" is not one make-model writes");
  }
  return spec;
}

std::optional<int> window_of(const Keys& keys, const RandomModelSpec& spec) {
  const std::string& a = spec.architecture;
  if (a == "llama") return std::nullopt;
  // Qwen names a window even when it is off.
  if (a == "qwen2" || a == "qwen3" || a == "qwen3_moe") {
    if (!keys.boolean("use_sliding_window", false) || keys.null("sliding_window"))
      return std::nullopt;
  }
  const bool fallback = a == "gemma2" || a == "gemma3" || a == "mistral";  // 4096 when absent
  if (!keys.present("sliding_window")) return fallback ? std::optional<int>(4096) : std::nullopt;
  if (keys.null("sliding_window")) return std::nullopt;
  return keys.small("sliding_window", 0);
}

// Ids beyond the smallest trained tokenizer become its own, as the presets'.
void special_ids_of(const Keys& root, RandomModelSpec& spec) {
  if (!root.null("bos_token_id")) {
    const std::int64_t bos = root.integer("bos_token_id", 1);
    spec.bos_id = bos >= 0 && bos < kMinVocab ? static_cast<int>(bos) : 1;
  }
  const Json* eos = root.find("eos_token_id");
  if (eos == nullptr || eos->is_null()) return;
  const Json list = eos->is_array() ? *eos : Json::array({*eos});
  const auto inside = [](std::int64_t id) { return id >= 0 && id < kMinVocab; };
  int beyond = 0;
  for (const Json& id : list) {
    if (!id.is_number_integer()) root.fail("eos_token_id", "an id or a list of ids");
    if (!inside(id.get<std::int64_t>())) ++beyond;
  }
  // The first replaced id is EOS 2, further ones rise to just below kMinVocab
  // (Llama 3's three become 2, 318, 319, as in the presets).
  int replaced = 0;
  for (const Json& id : list) {
    const std::int64_t value = id.get<std::int64_t>();
    if (inside(value)) {
      spec.eos_ids.push_back(static_cast<int>(value));
    } else {
      spec.eos_ids.push_back(replaced == 0 ? 2 : kMinVocab - beyond + replaced);
      ++replaced;
    }
  }
}

void quantization_of(const Keys& root, RandomModelSpec& spec, const std::string& source) {
  const Json* object = root.find("quantization_config");
  if (object == nullptr || object->is_null()) return;
  if (!object->is_object()) root.fail("quantization_config", "an object");
  const Keys quantization(*object, source);
  const std::string method = quantization.text("quant_method");
  if (method == "exl2") {
    spec.format = {WeightFormat::EXL2, quantization.number("bits", 4.0)};
    spec.exl2_head_bits = quantization.small("head_bits", 6);
  } else if (method == "gptq") {
    const std::int64_t bits = quantization.integer("bits", 4);
    if (bits != 4 && bits != 8) quantization.fail("bits", "4 or 8 (4- or 8-bit GPTQ)");
    spec.format = {WeightFormat::GPTQ, 4.0};
    spec.format.gptq_bits = static_cast<int>(bits);
    spec.gptq_group_size = quantization.small("group_size", 128);
    spec.gptq_act_order = quantization.boolean("desc_act", false);
    spec.gptq_v2 = quantization.text("checkpoint_format") == "gptq_v2";
  } else if (method == "exl3") {
    spec.format = FormatSpec{WeightFormat::EXL3};
    spec.format.exl3_bits = quantization.number("bits", 4.0);
    spec.exl3_head_bits = quantization.small("head_bits", 6);
    const std::string codebook = quantization.text("codebook");
    if (codebook == "mcg") spec.format.exl3_codebook = kernels::Exl3Codebook::mcg;
    if (codebook == "3inst") spec.format.exl3_codebook = kernels::Exl3Codebook::three_inst;
  } else if (method == "awq") {
    if (quantization.integer("bits", 4) != 4)
      quantization.fail("bits", "4 (AutoAWQ's GEMM layout)");
    spec.format = FormatSpec{WeightFormat::AWQ};
    const std::int64_t group = quantization.integer("group_size", 128);
    if (group != -1 && (group < 1 || group > 65536)) {
      quantization.fail("group_size", "a group size, or -1");
    }
    spec.group_size = group == -1 ? 0 : static_cast<int>(group);
  } else {
    reject("config_from",
           source + ": quantization \"" + method + "\" is not exl2, exl3, gptq or awq");
  }
}

void gemma_settings(const Keys& keys, RandomModelSpec& spec) {
  const bool gemma2 = spec.architecture == "gemma2";
  // Absent: Gemma 2 caps at 50 and 30; an explicit null is off.
  const auto cap = [&](const char* key, double fallback) {
    if (!keys.present(key)) return fallback;
    return keys.number(key, 0.0);
  };
  spec.softcap = {cap("attn_logit_softcapping", gemma2 ? 50.0 : 0.0),
                  cap("final_logit_softcapping", gemma2 ? 30.0 : 0.0)};
  spec.query_pre_attn_scalar = keys.number("query_pre_attn_scalar", 256.0);
  if (gemma2) return;
  spec.rope_local_theta = keys.number("rope_local_base_freq", 10000.0);
  int pattern = keys.small("sliding_window_pattern", keys.small("_sliding_window_pattern", 6));
  if (const Json* types = keys.find("layer_types"); types != nullptr && types->is_array()) {
    spec.write_layer_types = true;
    for (std::size_t i = 0; i < types->size(); ++i) {
      if ((*types)[i] == "full_attention") {
        pattern = static_cast<int>(i) + 1;
        break;
      }
    }
  }
  spec.sliding_window_pattern = pattern;
}

void expert_settings(const Keys& keys, RandomModelSpec& spec) {
  if (spec.architecture == "mixtral") {
    spec.moe.experts = keys.small("num_local_experts", 8);
    spec.moe.experts_per_token = keys.small("num_experts_per_tok", 2);
    return;
  }
  spec.moe.experts = keys.small("num_experts", 128);
  spec.moe.experts_per_token = keys.small("num_experts_per_tok", 8);
  spec.moe.norm_topk_prob = keys.boolean("norm_topk_prob", false);
  spec.moe.decoder_sparse_step = keys.small("decoder_sparse_step", 1);
  if (const Json* layers = keys.find("mlp_only_layers"); layers != nullptr && layers->is_array()) {
    for (const Json& layer : *layers) {
      if (!layer.is_number_integer()) keys.fail("mlp_only_layers", "a list of layer numbers");
      spec.moe.mlp_only_layers.push_back(layer.get<int>());
    }
  }
}

}  // namespace

RandomModelSpec spec_from_published_config_text(const std::string& text,
                                                const std::string& source) {
  Json root;
  try {
    root = Json::parse(text);
  } catch (const Json::exception& error) {
    reject("config_from", source + " is not JSON: " + error.what());
  }
  if (!root.is_object()) reject("config_from", source + " is not a JSON object");
  const Family& family = family_of(root, source);
  RandomModelSpec spec = default_spec(family.architecture);
  spec.multimodal = family.multimodal;
  spec.published_config = text;

  static const Json kEmpty = Json::object();
  const Json* text_object = &root;
  if (family.multimodal) {
    const auto found = root.find("text_config");
    text_object = found != root.end() && found->is_object() ? &*found : &kEmpty;
  }
  const Keys top(root, source);
  const Keys keys(*text_object, source);
  const std::string& a = spec.architecture;
  const bool gemma = a == "gemma2" || a == "gemma3";

  spec.rms_norm_eps = keys.number("rms_norm_eps", spec.rms_norm_eps);
  spec.rope_theta = keys.number("rope_theta", spec.rope_theta);
  const std::int64_t positions = a == "gemma3" ? 131072 : a == "gemma2" ? 8192 : 2048;
  spec.max_position_embeddings = keys.integer("max_position_embeddings", positions);
  spec.rope_scaling = rope_scaling_of(keys, top, source);
  spec.sliding_window = window_of(keys, spec);
  // Gemma ties by default (PretrainedConfig's true); the others' configs say false.
  spec.tie_embeddings = top.boolean("tie_word_embeddings", gemma);
  spec.torch_dtype = top.text("torch_dtype");
  if (spec.torch_dtype.empty()) spec.torch_dtype = top.text("dtype");  // transformers >= 4.56
  spec.format = {spec.torch_dtype == "bfloat16" ? WeightFormat::BF16 : WeightFormat::FP16, 4.0};
  quantization_of(top, spec, source);
  special_ids_of(top, spec);
  if (gemma) gemma_settings(keys, spec);
  if (a == "phi3") spec.partial_rotary_factor = keys.number("partial_rotary_factor", 1.0);
  if (a == "mixtral" || a == "qwen3_moe") expert_settings(keys, spec);

  const Shapes real = published_shapes(keys, spec, family.multimodal);
  scale_down(keys, real, spec);
  return spec;
}

RandomModelSpec spec_from_published_config(const std::filesystem::path& file) {
  return spec_from_published_config_text(read_text(file), file.string());
}

}  // namespace quire::engine::modelgen
