#include "config_files.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "config_parts.h"
#include "quire/engine/modelgen/compressed_tensors_config.h"
#include "quire/engine/modelgen/random_stream.h"

namespace quire::engine::modelgen::detail {
namespace {

const char* class_name(const std::string& architecture) {
  if (architecture == "mistral") return "MistralForCausalLM";
  if (architecture == "qwen2") return "Qwen2ForCausalLM";
  if (architecture == "qwen3") return "Qwen3ForCausalLM";
  return "LlamaForCausalLM";
}

}  // namespace

Json rope_scaling_json(const RandomModelSpec& spec) {
  const RopeScalingSpec& scaling = spec.rope_scaling;
  const char* type = "";
  switch (scaling.type) {
    case RopeScalingSpec::Type::None:
    case RopeScalingSpec::Type::LongRope:  // Phi-3's own object (family_configs.cpp)
      return nullptr;
    case RopeScalingSpec::Type::Linear:
      type = "linear";
      break;
    case RopeScalingSpec::Type::Dynamic:
      type = "dynamic";
      break;
    case RopeScalingSpec::Type::Llama3:
      type = "llama3";
      break;
    case RopeScalingSpec::Type::Yarn:
      type = "yarn";
      break;
  }
  // Both spellings of the type: older readers look for "type", newer for "rope_type".
  Json object{{"type", type}, {"rope_type", type}, {"factor", scaling.factor}};
  if (scaling.type == RopeScalingSpec::Type::Llama3) {
    object["low_freq_factor"] = scaling.low_freq_factor;
    object["high_freq_factor"] = scaling.high_freq_factor;
    object["original_max_position_embeddings"] = scaling.original_max_position_embeddings != 0
                                                     ? scaling.original_max_position_embeddings
                                                     : kLlama3OriginalContext;
  }
  if (scaling.type == RopeScalingSpec::Type::Yarn &&
      scaling.original_max_position_embeddings != 0) {
    object["original_max_position_embeddings"] = scaling.original_max_position_embeddings;
  }
  return object;
}

namespace {

Json integer_quantization_json(const RandomModelSpec& spec) {
  IntegerSchemeSettings settings;
  settings.bits = spec.format.kind == WeightFormat::W4A16 ? 4 : 8;
  settings.symmetric = !spec.format.zero_points;
  settings.group_size = spec.resolved_group_size();
  settings.actorder = spec.actorder;
  settings.naive = spec.format.kind == WeightFormat::INT8;
  // lm_head and MoE routers ignored as llm-compressor's examples ignore them.
  if (spec.architecture == "mixtral") settings.ignore.push_back("re:.*block_sparse_moe.gate");
  if (spec.architecture == "qwen3_moe") settings.ignore.push_back("re:.*mlp.gate$");
  return Json::parse(compressed_tensors_quantization_config(settings));
}

}  // namespace

Json quantization_json(const RandomModelSpec& spec) {
  switch (spec.format.kind) {
    case WeightFormat::EXL2:
      return Json{{"quant_method", "exl2"},
                  {"bits", spec.format.exl2_bits},
                  {"head_bits", spec.exl2_head_bits}};
    case WeightFormat::GPTQ:
      return Json{{"quant_method", "gptq"},
                  {"bits", spec.format.gptq_bits},
                  {"group_size", spec.gptq_group_size},
                  {"desc_act", spec.gptq_act_order},
                  {"sym", false},
                  {"checkpoint_format", spec.gptq_v2 ? "gptq_v2" : "gptq"}};
    case WeightFormat::FP8:
    case WeightFormat::FP8_TENSOR: {
      // llm-compressor's FP8 schemes (FP8_DYNAMIC per row, FP8 per tensor):
      // weights quantized, activations to be quantized per token as they
      // come (engines may keep them in 16 bits), lm_head left alone.
      const bool per_row = spec.format.kind == WeightFormat::FP8;
      const Json weights{
          {"num_bits", 8},       {"type", "float"},   {"strategy", per_row ? "channel" : "tensor"},
          {"dynamic", false},    {"symmetric", true}, {"group_size", nullptr},
          {"observer", "minmax"}};
      const Json activations{{"num_bits", 8},   {"type", "float"},   {"strategy", "token"},
                             {"dynamic", true}, {"symmetric", true}, {"observer", nullptr}};
      return Json{
          {"quant_method", "compressed-tensors"},
          {"format", "float-quantized"},
          {"quantization_status", "compressed"},
          {"config_groups",
           {{"group_0",
             {{"targets", {"Linear"}}, {"weights", weights}, {"input_activations", activations}}}}},
          {"ignore", {"lm_head"}},
          {"kv_cache_scheme", nullptr}};
    }
    case WeightFormat::EXL3: {
      Exl3ConfigSettings settings;
      settings.bits = spec.format.exl3_bits;
      settings.head_bits = spec.exl3_head_bits;
      settings.codebook = spec.format.exl3_codebook;
      settings.calibration = Exl3ConfigSettings::Calibration{250, 2048};
      return exl3_quantization_json(settings);
    }
    case WeightFormat::W4A16:
    case WeightFormat::W8A16:
    case WeightFormat::INT8:
      return integer_quantization_json(spec);
    case WeightFormat::AWQ:
      // AwqConfig.to_transformers_dict (awq/models/_config.py); Mixtral's
      // router is left out by its model class (modules_to_not_convert).
      return Json{{"quant_method", "awq"},
                  {"zero_point", true},
                  {"group_size", spec.resolved_group_size() == 0 ? -1 : spec.resolved_group_size()},
                  {"bits", 4},
                  {"version", "gemm"},
                  {"modules_to_not_convert",
                   spec.architecture == "mixtral" ? Json::array({"gate"}) : Json(nullptr)}};
    case WeightFormat::FP16:
    case WeightFormat::BF16:
      break;
  }
  return nullptr;
}

std::string text_of(const Json& json) {
  return json.dump(2) + "\n";
}

Json ids_json(const std::vector<int>& ids) {
  if (ids.size() == 1) return ids.front();
  return Json(ids);
}

Json bos_json(const SpecialIds& ids) {
  return ids.bos ? Json(*ids.bos) : Json(nullptr);
}

std::string torch_dtype_of(const RandomModelSpec& spec) {
  if (!spec.torch_dtype.empty()) return spec.torch_dtype;
  const WeightFormat kind = spec.format.kind;
  return kind == WeightFormat::BF16 || kind == WeightFormat::FP8 ||
                 kind == WeightFormat::FP8_TENSOR || kind == WeightFormat::W4A16 ||
                 kind == WeightFormat::W8A16 || kind == WeightFormat::INT8
             ? "bfloat16"
             : "float16";
}

LongRopeFactors longrope_factors(const RandomModelSpec& spec) {
  const auto draw = [&](const char* label, double low, double high) {
    RandomStream stream(spec.seed, label);
    std::vector<double> values(static_cast<std::size_t>(spec.rotary_dim() / 2));
    // Four decimals: lists that read like the published ones.
    for (double& value : values)
      value = std::round((low + (high - low) * stream.uniform()) * 1e4) / 1e4;
    std::sort(values.begin(), values.end());
    return values;
  };
  return {draw("rope_scaling.short_factor", 1.0, 1.5), draw("rope_scaling.long_factor", 1.0, 40.0)};
}

void apply_extra_config(const RandomModelSpec& spec, Json& config) {
  for (const auto& [key, value] : spec.extra_config) {
    try {
      config[key] = Json::parse(value);
    } catch (const Json::parse_error&) {
      throw std::invalid_argument("extra_config: the value of \"" + key +
                                  "\" is not JSON: " + value);
    }
  }
}

SpecialIds special_ids(const RandomModelSpec& spec) {
  SpecialIds ids;
  ids.bos = spec.bos_id.value_or(kBosId);
  ids.eos = spec.eos_ids.empty() ? std::vector<int>{kEosId} : spec.eos_ids;
  return ids;
}

std::string config_json(const RandomModelSpec& spec) {
  return config_json(spec, special_ids(spec));
}

Json generated_config(const RandomModelSpec& spec, const SpecialIds& ids) {
  if (has_family_config(spec)) return family_config(spec, ids);
  const int head_dim = spec.resolved_head_dim();
  Json config;
  config["architectures"] = Json::array({class_name(spec.architecture)});
  config["model_type"] = spec.architecture;
  config["hidden_size"] = spec.hidden;
  config["num_hidden_layers"] = spec.layers;
  config["num_attention_heads"] = spec.heads;
  config["num_key_value_heads"] = spec.kv_heads;
  // Qwen3's files always write head_dim out.
  if (spec.head_dim != 0 || head_dim * spec.heads != spec.hidden || spec.architecture == "qwen3") {
    config["head_dim"] = head_dim;
  }
  config["intermediate_size"] = spec.intermediate;
  config["hidden_act"] = "silu";
  config["vocab_size"] = spec.vocab;
  config["rms_norm_eps"] = spec.rms_norm_eps;
  config["rope_theta"] = spec.rope_theta;
  if (Json scaling = rope_scaling_json(spec); !scaling.is_null()) config["rope_scaling"] = scaling;
  config["max_position_embeddings"] = spec.max_position_embeddings;
  if (spec.architecture == "llama") {
    config["attention_bias"] = false;
    config["mlp_bias"] = false;
  } else if (spec.architecture == "mistral") {
    if (spec.sliding_window) config["sliding_window"] = *spec.sliding_window;
  } else {
    if (spec.architecture == "qwen3") config["attention_bias"] = false;
    // Qwen2 and Qwen3 configurations name a window even when it is off; readers must
    // look at use_sliding_window. max_window_layers 0: every layer slides.
    config["use_sliding_window"] = spec.sliding_window.has_value();
    config["sliding_window"] = spec.sliding_window.value_or(
        static_cast<int>(std::min<std::int64_t>(spec.max_position_embeddings, 1 << 24)));
    config["max_window_layers"] = spec.sliding_window ? 0 : spec.layers;
  }
  config["tie_word_embeddings"] = spec.resolved_tie();
  config["bos_token_id"] = bos_json(ids);
  config["eos_token_id"] = ids_json(ids.eos);
  config["torch_dtype"] = torch_dtype_of(spec);
  if (Json quantization = quantization_json(spec); !quantization.is_null()) {
    config["quantization_config"] = quantization;
  }
  return config;
}

std::string config_json(const RandomModelSpec& spec, const SpecialIds& ids) {
  Json config =
      spec.published_config.empty() ? generated_config(spec, ids) : published_config(spec, ids);
  apply_extra_config(spec, config);
  return text_of(config);
}

std::string generation_config_json(const SpecialIds& ids) {
  return text_of(Json{{"bos_token_id", bos_json(ids)}, {"eos_token_id", ids_json(ids.eos)}});
}

std::string tokenizer_config_json(const RandomModelSpec& spec) {
  return text_of(Json{{"add_bos_token", true},
                      {"add_eos_token", false},
                      {"bos_token", "<s>"},
                      {"eos_token", "</s>"},
                      {"unk_token", "<unk>"},
                      {"model_max_length", spec.max_position_embeddings},
                      {"tokenizer_class", "LlamaTokenizer"}});
}

namespace {

// str(torch.dtype), as exllamav3 lists a tensor's type.
const char* torch_dtype_name(kernels::DType dtype) {
  switch (dtype) {
    case kernels::DType::F32:
      return "torch.float32";
    case kernels::DType::F16:
      return "torch.float16";
    case kernels::DType::BF16:
      return "torch.bfloat16";
    case kernels::DType::I32:
      return "torch.int32";
    case kernels::DType::I16:
      return "torch.int16";
    case kernels::DType::U8:
      return "torch.uint8";
    case kernels::DType::F8_E4M3:
      return "torch.float8_e4m3fn";
    case kernels::DType::I64:
      return "torch.int64";
    case kernels::DType::I8:
      return "torch.int8";
  }
  return "?";
}

}  // namespace

std::string exl3_quantization_config_json(const RandomModelSpec& spec,
                                          std::span<const io::SafetensorsWriter::Listing> tensors) {
  Json config = quantization_json(spec);
  config["tensor_storage"] = exl3_tensor_storage(tensors);
  return config.dump(4) + "\n";
}

Json exl3_quantization_json(const Exl3ConfigSettings& settings) {
  // What exllamav3's compile step writes (conversion/compile.py).
  const kernels::Exl3Codebook codebook = settings.codebook;
  Json config{{"quant_method", "exl3"},
              {"version", "1.4.1"},
              {"bits", settings.bits},
              {"head_bits", settings.head_bits}};
  if (settings.calibration) {
    config["calibration"] = {{"rows", settings.calibration->rows},
                             {"cols", settings.calibration->columns}};
  }
  config["out_scales"] = settings.out_scales;
  config["codebook"] = codebook == kernels::Exl3Codebook::mcg          ? "mcg"
                       : codebook == kernels::Exl3Codebook::three_inst ? "3inst"
                                                                       : "mul1";
  return config;
}

Json exl3_tensor_storage(std::span<const io::SafetensorsWriter::Listing> tensors) {
  // Modules in the order their first tensor was written, each a leaf module
  // whose key is the tensor name without its last part.
  Json storage = Json::object();
  for (const io::SafetensorsWriter::Listing& tensor : tensors) {
    const std::size_t dot = tensor.name.rfind('.');
    const std::string module(tensor.name.substr(0, dot));
    const std::string part(tensor.name.substr(dot + 1));
    Json& entry = storage[module];
    entry["stored_tensors"][std::string(tensor.name)] = {
        {"shape", Json(std::vector<std::int64_t>(tensor.shape.begin(), tensor.shape.end()))},
        {"n_bytes", tensor.bytes},
        {"dtype", torch_dtype_name(tensor.dtype)}};
    if (part == "trellis") {
      entry["quant_format"] = "exl3";
      entry["bits_per_weight"] = tensor.shape.back() / 16;
    }
    if (part == "mul1") entry["mul1_multiplier"] = kernels::kExl3Mul1Multiplier;
    if (part == "mcg") entry["mcg_multiplier"] = kernels::kExl3McgMultiplier;
  }
  return storage;
}

}  // namespace quire::engine::modelgen::detail

namespace quire::engine::modelgen {

// One group targeting every Linear, the weights' QuantizationArgs as
// llm-compressor writes them, activations left alone.
std::string compressed_tensors_quantization_config(const IntegerSchemeSettings& settings) {
  using detail::Json;
  const int group = settings.group_size;
  const Json weights{{"actorder", settings.actorder ? Json("group") : Json(nullptr)},
                     {"block_structure", nullptr},
                     {"dynamic", false},
                     {"group_size", group == 0 ? Json(nullptr) : Json(group)},
                     {"num_bits", settings.bits},
                     {"observer", "minmax"},
                     {"observer_kwargs", Json::object()},
                     {"strategy", group == 0 ? "channel" : "group"},
                     {"symmetric", settings.symmetric},
                     {"type", "int"}};
  const Json config{{"config_groups",
                     {{"group_0",
                       {{"input_activations", nullptr},
                        {"output_activations", nullptr},
                        {"targets", {"Linear"}},
                        {"weights", weights}}}}},
                    {"format", settings.naive ? "naive-quantized" : "pack-quantized"},
                    {"global_compression_ratio", nullptr},
                    {"ignore", settings.ignore},
                    {"kv_cache_scheme", nullptr},
                    {"quant_method", "compressed-tensors"},
                    {"quantization_status", "compressed"}};
  return config.dump();
}

std::string exl3_quantization_config(const Exl3ConfigSettings& settings) {
  return detail::exl3_quantization_json(settings).dump(2);
}

std::string exl3_quantization_config_file(const Exl3ConfigSettings& settings,
                                          std::span<const io::SafetensorsWriter::Listing> tensors) {
  detail::Json config = detail::exl3_quantization_json(settings);
  config["tensor_storage"] = detail::exl3_tensor_storage(tensors);
  return config.dump(4) + "\n";
}

}  // namespace quire::engine::modelgen
