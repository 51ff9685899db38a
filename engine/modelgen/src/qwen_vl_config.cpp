// Qwen2.5-VL's config.json and preprocessor_config.json as
// Qwen/Qwen2.5-VL-7B-Instruct publishes them: the language model's keys at
// the top level, vision_config, M-RoPE's rope_scaling and the vision token
// ids, in the file's order.

#include <string>

#include "config_parts.h"

namespace quire::engine::modelgen::detail {
namespace {

// M-RoPE's split of a head's rotary frequencies among time, height and
// width: [16, 24, 24] of 64 for the published head_dim of 128, the same
// shares (1/4, 3/8, 3/8) at any multiple of 32.
Json mrope_section(const RandomModelSpec& spec) {
  const int half = spec.resolved_head_dim() / 2;
  return Json::array({half / 4, half * 3 / 8, half * 3 / 8});
}

Json qwen_vision_config(const RandomModelSpec& spec) {
  const VisionSpec& vision = spec.vision;
  Json config;
  config["depth"] = vision.layers;
  config["hidden_act"] = "silu";
  config["hidden_size"] = vision.hidden;
  config["intermediate_size"] = vision.intermediate;
  config["num_heads"] = vision.heads;
  config["in_chans"] = 3;
  config["out_hidden_size"] = spec.hidden;
  config["patch_size"] = vision.patch_size;
  config["spatial_merge_size"] = vision.merge_size;
  config["spatial_patch_size"] = vision.patch_size;
  config["window_size"] = vision.window_size;
  config["fullatt_block_indexes"] = vision.fullatt_blocks;
  config["tokens_per_second"] = 2;
  config["temporal_patch_size"] = vision.temporal_patch_size;
  return config;
}

}  // namespace

Json qwen2_5_vl_config(const RandomModelSpec& spec, const SpecialIds& ids) {
  // The vision tokens live at the top of the embedding, as 151652..151656
  // do in the published one of 152064 rows.
  const int top = spec.vocab;
  Json config;
  config["architectures"] = Json::array({"Qwen2_5_VLForConditionalGeneration"});
  config["attention_dropout"] = 0.0;
  config["bos_token_id"] = bos_json(ids);
  config["eos_token_id"] = ids_json(ids.eos);
  config["vision_start_token_id"] = top - 5;
  config["vision_end_token_id"] = top - 4;
  config["vision_token_id"] = top - 3;
  config["image_token_id"] = top - 2;
  config["video_token_id"] = top - 1;
  config["hidden_act"] = "silu";
  config["hidden_size"] = spec.hidden;
  config["initializer_range"] = 0.02;
  config["intermediate_size"] = spec.intermediate;
  config["max_position_embeddings"] = spec.max_position_embeddings;
  config["max_window_layers"] = spec.layers;
  config["model_type"] = "qwen2_5_vl";
  config["num_attention_heads"] = spec.heads;
  config["num_hidden_layers"] = spec.layers;
  config["num_key_value_heads"] = spec.kv_heads;
  config["rms_norm_eps"] = spec.rms_norm_eps;
  config["rope_theta"] = spec.rope_theta;
  // Named, but off (use_sliding_window), as published.
  config["sliding_window"] = 32768;
  config["tie_word_embeddings"] = spec.resolved_tie();
  config["torch_dtype"] = torch_dtype_of(spec);
  config["transformers_version"] = "4.41.2";
  config["use_cache"] = true;
  config["use_sliding_window"] = false;
  config["vision_config"] = qwen_vision_config(spec);
  config["rope_scaling"] = {{"type", "mrope"}, {"mrope_section", mrope_section(spec)}};
  config["vocab_size"] = spec.vocab;
  if (spec.text_prefix == "model.language_model.") {
    // transformers >= 4.52 saves the language model's keys again under
    // text_config (and the tensors under model.language_model.).
    Json text;
    for (const char* key :
         {"hidden_act", "hidden_size", "intermediate_size", "max_position_embeddings",
          "max_window_layers", "num_attention_heads", "num_hidden_layers", "num_key_value_heads",
          "rms_norm_eps", "rope_theta", "sliding_window", "use_sliding_window", "vocab_size"}) {
      text[key] = config[key];
    }
    text["model_type"] = "qwen2_5_vl_text";
    text["rope_scaling"] = {
        {"mrope_section", mrope_section(spec)}, {"rope_type", "default"}, {"type", "default"}};
    config["text_config"] = text;
    config["transformers_version"] = "4.53.1";
  }
  Json quantization = quantization_json(spec);
  if (!quantization.is_null()) config["quantization_config"] = quantization;
  return config;
}

std::string preprocessor_config_json(const RandomModelSpec& spec) {
  const VisionSpec& vision = spec.vision;
  Json config;
  config["min_pixels"] = 3136;
  config["max_pixels"] = 12845056;
  config["patch_size"] = vision.patch_size;
  config["temporal_patch_size"] = vision.temporal_patch_size;
  config["merge_size"] = vision.merge_size;
  config["image_mean"] = Json::array({0.48145466, 0.4578275, 0.40821073});
  config["image_std"] = Json::array({0.26862954, 0.26130258, 0.27577711});
  config["image_processor_type"] = "Qwen2VLImageProcessor";
  config["processor_class"] = "Qwen2_5_VLProcessor";
  return text_of(config);
}

std::string qwen2_5_vl_chat_template() {
  return "{%- for message in messages -%}\n"
         "{%- if loop.first and message.role != 'system' -%}\n"
         "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
         "{% endif -%}\n"
         "<|im_start|>{{ message.role }}\n"
         "{% if message.content is string -%}\n"
         "{{ message.content }}\n"
         "{%- else -%}\n"
         "{%- for part in message.content -%}\n"
         "{%- if part.type == 'image' or part.type == 'image_url' -%}\n"
         "<|vision_start|><|image_pad|><|vision_end|>\n"
         "{%- elif part.type == 'text' -%}\n"
         "{{ part.text }}\n"
         "{%- endif -%}\n"
         "{%- endfor -%}\n"
         "{%- endif -%}\n"
         "<|im_end|>\n"
         "{% endfor -%}\n"
         "{%- if add_generation_prompt -%}\n"
         "<|im_start|>assistant\n"
         "{% endif -%}\n";
}

}  // namespace quire::engine::modelgen::detail
