// config.json of the families beyond the Llama-style four, with the keys
// their published files write: Gemma 2 as google/gemma-2-9b-it, Gemma 3 as
// google/gemma-3-1b-it (text) and google/gemma-3-4b-it (with vision), Phi-3
// as microsoft/Phi-3.5-mini-instruct, Mixtral as
// mistralai/Mixtral-8x7B-Instruct-v0.1, Qwen3-MoE as Qwen/Qwen3-30B-A3B.

#include <cmath>
#include <map>
#include <string>

#include "config_parts.h"
#include "mistral3_files.h"

namespace quire::engine::modelgen::detail {
namespace {

// A whole number as the files write it (256, not 256.0).
Json number(double value) {
  if (value == std::floor(value) && std::fabs(value) < 1e15) {
    return static_cast<std::int64_t>(value);
  }
  return value;
}

Json cap(double value) {
  return value != 0.0 ? Json(value) : Json(nullptr);
}

Json window(const RandomModelSpec& spec) {
  return spec.sliding_window ? Json(*spec.sliding_window) : Json(nullptr);
}

Json layer_types(const RandomModelSpec& spec) {
  Json types = Json::array();
  const int pattern = spec.resolved_sliding_window_pattern();
  for (int i = 0; i < spec.layers; ++i)
    types.push_back((i + 1) % pattern != 0 ? "sliding_attention" : "full_attention");
  return types;
}

// The shape keys every family writes first.
Json shapes(const RandomModelSpec& spec, const char* class_name, const char* model_type) {
  Json config;
  config["architectures"] = Json::array({class_name});
  config["model_type"] = model_type;
  config["hidden_size"] = spec.hidden;
  config["num_hidden_layers"] = spec.layers;
  config["num_attention_heads"] = spec.heads;
  config["num_key_value_heads"] = spec.kv_heads;
  return config;
}

void ids_and_dtype(const RandomModelSpec& spec, const SpecialIds& ids, Json& config) {
  config["bos_token_id"] = bos_json(ids);
  config["eos_token_id"] = ids_json(ids.eos);
  config["torch_dtype"] = torch_dtype_of(spec);
}

void quantization(const RandomModelSpec& spec, Json& config) {
  if (Json value = quantization_json(spec); !value.is_null()) config["quantization_config"] = value;
}

// Gemma's text keys, in the order of the Llama-style writer. Its published
// files leave tie_word_embeddings to its default, true.
Json gemma_text(const RandomModelSpec& spec, const SpecialIds& ids) {
  const bool gemma3 = spec.architecture == "gemma3";
  Json config = shapes(spec, gemma3 ? "Gemma3ForCausalLM" : "Gemma2ForCausalLM",
                       gemma3 ? "gemma3_text" : "gemma2");
  config["head_dim"] = spec.resolved_head_dim();
  config["intermediate_size"] = spec.intermediate;
  if (!gemma3) config["hidden_act"] = "gelu_pytorch_tanh";  // Gemma 2 writes both names
  config["hidden_activation"] = "gelu_pytorch_tanh";
  config["vocab_size"] = spec.vocab;
  config["rms_norm_eps"] = spec.rms_norm_eps;
  config["rope_theta"] = spec.rope_theta;
  if (gemma3) {
    config["rope_local_base_freq"] = spec.rope_local_theta;
    config["rope_scaling"] =
        spec.rope_scaling.type == RopeScalingSpec::Type::Linear
            ? Json{{"factor", spec.rope_scaling.factor}, {"rope_type", "linear"}}
            : Json(nullptr);
  }
  config["max_position_embeddings"] = spec.max_position_embeddings;
  config["query_pre_attn_scalar"] = number(spec.resolved_query_pre_attn_scalar());
  config["attn_logit_softcapping"] = cap(spec.softcap.attention);
  config["final_logit_softcapping"] = cap(spec.softcap.final);
  config["sliding_window"] = window(spec);
  if (!gemma3) config["sliding_window_size"] = window(spec);  // gemma-2-9b-it's older name
  if (gemma3) config["sliding_window_pattern"] = spec.resolved_sliding_window_pattern();
  if (spec.write_layer_types) config["layer_types"] = layer_types(spec);
  config["cache_implementation"] = "hybrid";
  config["attention_bias"] = false;
  config["attention_dropout"] = 0.0;
  config["pad_token_id"] = 0;
  if (!spec.resolved_tie()) config["tie_word_embeddings"] = false;
  ids_and_dtype(spec, ids, config);
  quantization(spec, config);
  return config;
}

// Gemma3TextConfig's defaults: gemma-3-4b-it's text_config writes only a few
// keys and leaves the rest to them.
const std::map<std::string, Json>& gemma3_text_defaults() {
  static const std::map<std::string, Json> defaults = {{"vocab_size", 262208},
                                                       {"num_attention_heads", 8},
                                                       {"num_key_value_heads", 4},
                                                       {"head_dim", 256},
                                                       {"hidden_activation", "gelu_pytorch_tanh"},
                                                       {"max_position_embeddings", 131072},
                                                       {"rms_norm_eps", 1e-6},
                                                       {"rope_theta", 1e6},
                                                       {"rope_local_base_freq", 10000.0},
                                                       {"query_pre_attn_scalar", 256},
                                                       {"attn_logit_softcapping", nullptr},
                                                       {"final_logit_softcapping", nullptr},
                                                       {"sliding_window_pattern", 6},
                                                       {"cache_implementation", "hybrid"},
                                                       {"attention_bias", false},
                                                       {"attention_dropout", 0.0},
                                                       {"pad_token_id", 0}};
  return defaults;
}

// gemma-3-4b-it: the text model's keys inside text_config (sorted, as
// written there), a SigLIP vision_config and the image token ids.
Json gemma3_multimodal(const RandomModelSpec& spec, const SpecialIds& ids) {
  const Json text = gemma_text(spec, ids);
  std::map<std::string, Json> kept;
  for (const auto& [key, value] : text.items()) {
    if (key == "architectures" || key == "bos_token_id" || key == "eos_token_id" ||
        key == "torch_dtype" || key == "quantization_config" || key == "tie_word_embeddings") {
      continue;  // top-level keys
    }
    const auto& defaults = gemma3_text_defaults();
    const auto found = defaults.find(key);
    if (key == "rope_scaling" && value.is_null()) continue;
    if (found != defaults.end() && found->second == value) continue;
    kept[key] = value;
  }
  Json text_config;
  for (auto& [key, value] : kept)
    text_config[key] = value;

  const VisionSpec& vision = spec.vision;
  const Json vision_config = {{"hidden_size", vision.hidden},
                              {"image_size", vision.image_size},
                              {"intermediate_size", vision.intermediate},
                              {"model_type", "siglip_vision_model"},
                              {"num_attention_heads", vision.heads},
                              {"num_hidden_layers", vision.layers},
                              {"patch_size", vision.patch_size},
                              {"vision_use_head", false}};
  // The image tokens live at the top of the embedding, as 262144 does in
  // the published one of 262208 rows.
  Json config;
  config["architectures"] = Json::array({"Gemma3ForConditionalGeneration"});
  config["boi_token_index"] = spec.vocab - 3;
  config["eoi_token_index"] = spec.vocab - 2;
  config["eos_token_id"] = ids_json(ids.eos);
  config["image_token_index"] = spec.vocab - 1;
  config["initializer_range"] = 0.02;
  config["mm_tokens_per_image"] = vision.tokens_per_image;
  config["model_type"] = "gemma3";
  config["text_config"] = text_config;
  if (!spec.resolved_tie()) config["tie_word_embeddings"] = false;
  config["torch_dtype"] = torch_dtype_of(spec);
  config["vision_config"] = vision_config;
  quantization(spec, config);
  return config;
}

Json phi3(const RandomModelSpec& spec, const SpecialIds& ids) {
  Json config = shapes(spec, "Phi3ForCausalLM", "phi3");
  config["intermediate_size"] = spec.intermediate;
  config["hidden_act"] = "silu";
  config["vocab_size"] = spec.vocab;
  config["rms_norm_eps"] = spec.rms_norm_eps;
  config["rope_theta"] = spec.rope_theta;
  if (spec.partial_rotary_factor != 1.0) {
    config["partial_rotary_factor"] = spec.partial_rotary_factor;  // Phi-4-mini: 0.75
  }
  const bool longrope = spec.rope_scaling.type == RopeScalingSpec::Type::LongRope;
  if (longrope) {
    const LongRopeFactors factors = longrope_factors(spec);
    config["rope_scaling"] = {{"long_factor", factors.long_factor},
                              {"short_factor", factors.short_factor},
                              {"type", "longrope"}};
  } else {
    config["rope_scaling"] = nullptr;
  }
  config["max_position_embeddings"] = spec.max_position_embeddings;
  if (longrope) {
    // Phi-3 names the trained context beside rope_scaling, not inside it.
    const std::int64_t original = spec.rope_scaling.original_max_position_embeddings;
    config["original_max_position_embeddings"] =
        original != 0 ? original : kLongRopeOriginalContext;
  }
  config["sliding_window"] = window(spec);
  config["attention_bias"] = false;
  config["attention_dropout"] = 0.0;
  config["embd_pdrop"] = 0.0;
  config["resid_pdrop"] = 0.0;
  config["tie_word_embeddings"] = spec.resolved_tie();
  ids_and_dtype(spec, ids, config);
  quantization(spec, config);
  return config;
}

// Mixtral and Qwen3-MoE: Mistral's and Qwen3's keys with their experts'.
Json mixture(const RandomModelSpec& spec, const SpecialIds& ids) {
  const bool qwen = spec.architecture == "qwen3_moe";
  Json config = shapes(spec, qwen ? "Qwen3MoeForCausalLM" : "MixtralForCausalLM",
                       qwen ? "qwen3_moe" : "mixtral");
  const int head_dim = spec.resolved_head_dim();
  if (qwen || head_dim * spec.heads != spec.hidden) config["head_dim"] = head_dim;
  config["intermediate_size"] = spec.intermediate;
  if (qwen) config["moe_intermediate_size"] = spec.resolved_expert_intermediate();
  config["hidden_act"] = "silu";
  config["vocab_size"] = spec.vocab;
  config["rms_norm_eps"] = spec.rms_norm_eps;
  config["rope_theta"] = spec.rope_theta;
  if (Json scaling = rope_scaling_json(spec); !scaling.is_null()) {
    config["rope_scaling"] = scaling;
  } else if (qwen) {
    config["rope_scaling"] = nullptr;
  }
  config["max_position_embeddings"] = spec.max_position_embeddings;
  const MoeSpec& moe = spec.moe;
  if (qwen) {
    config["attention_bias"] = false;
    config["num_experts"] = moe.experts;
    config["num_experts_per_tok"] = moe.experts_per_token;
    config["norm_topk_prob"] = moe.norm_topk_prob;
    config["decoder_sparse_step"] = moe.decoder_sparse_step;
    config["mlp_only_layers"] = moe.mlp_only_layers;
    config["router_aux_loss_coef"] = 0.001;
  } else {
    config["num_local_experts"] = moe.experts;
    config["num_experts_per_tok"] = moe.experts_per_token;
    config["router_aux_loss_coef"] = 0.02;
  }
  config["output_router_logits"] = false;
  if (qwen) {
    // As Qwen3 writes it: max_window_layers 0 has every layer slide.
    config["use_sliding_window"] = spec.sliding_window.has_value();
    config["sliding_window"] = window(spec);
    config["max_window_layers"] = spec.sliding_window ? 0 : spec.layers;
  } else {
    config["sliding_window"] = window(spec);
  }
  config["attention_dropout"] = 0.0;
  config["tie_word_embeddings"] = spec.resolved_tie();
  ids_and_dtype(spec, ids, config);
  quantization(spec, config);
  return config;
}

}  // namespace

Json gemma_text_config(const RandomModelSpec& spec, const SpecialIds& ids) {
  return gemma_text(spec, ids);
}

bool has_family_config(const RandomModelSpec& spec) {
  const std::string& a = spec.architecture;
  return a == "gemma2" || a == "gemma3" || a == "phi3" || a == "mixtral" || a == "qwen3_moe" ||
         a == "qwen2_5_vl" || is_mistral3(spec);
}

Json family_config(const RandomModelSpec& spec, const SpecialIds& ids) {
  const std::string& a = spec.architecture;
  if (a == "gemma3" && spec.multimodal) return gemma3_multimodal(spec, ids);
  if (is_mistral3(spec)) return mistral3_config(spec, ids);
  if (a == "gemma2" || a == "gemma3") return gemma_text(spec, ids);
  if (a == "phi3") return phi3(spec, ids);
  if (a == "qwen2_5_vl") return qwen2_5_vl_config(spec, ids);
  return mixture(spec, ids);
}

}  // namespace quire::engine::modelgen::detail
