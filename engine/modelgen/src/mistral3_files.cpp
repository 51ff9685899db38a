#include "mistral3_files.h"

#include <cmath>

#include "spec_text.h"

namespace quire::engine::modelgen::detail {
namespace {

double inverse_root(std::int64_t n) {
  return 1.0 / std::sqrt(static_cast<double>(n));
}

// Keys of the text model that Mistral-Small-3.1's config.json keeps at the
// top rather than in text_config.
bool top_level_key(const std::string& key) {
  return key == "architectures" || key == "bos_token_id" || key == "eos_token_id" ||
         key == "torch_dtype" || key == "quantization_config" || key == "tie_word_embeddings";
}

}  // namespace

bool is_mistral3(const RandomModelSpec& spec) {
  return spec.multimodal && spec.architecture == "mistral";
}

Json mistral3_config(const RandomModelSpec& spec, const SpecialIds& ids) {
  RandomModelSpec text_spec = spec;
  text_spec.multimodal = false;
  const Json text = generated_config(text_spec, ids);
  Json text_config;
  for (const auto& [key, value] : text.items()) {
    if (!top_level_key(key)) text_config[key] = value;
  }
  // The published file names the window null: Mistral Small 3 attends fully.
  if (!text_config.contains("sliding_window")) text_config["sliding_window"] = nullptr;

  const VisionSpec& vision = spec.vision;
  const Json vision_config = {{"attention_dropout", 0.0},
                              {"head_dim", vision.hidden / vision.heads},
                              {"hidden_act", "silu"},
                              {"hidden_size", vision.hidden},
                              {"image_size", vision.image_size},
                              {"initializer_range", 0.02},
                              {"intermediate_size", vision.intermediate},
                              {"model_type", "pixtral"},
                              {"num_attention_heads", vision.heads},
                              {"num_channels", 3},
                              {"num_hidden_layers", vision.layers},
                              {"patch_size", vision.patch_size},
                              {"rope_theta", 10000.0}};
  Json config;
  config["architectures"] = Json::array({"Mistral3ForConditionalGeneration"});
  config["bos_token_id"] = bos_json(ids);
  config["eos_token_id"] = ids_json(ids.eos);
  // [IMG] is id 10 in the published tokenizer; inside any small vocabulary too.
  config["image_token_index"] = 10;
  config["model_type"] = "mistral3";
  config["multimodal_projector_bias"] = vision.projector_bias;
  config["projector_hidden_act"] = "gelu";
  config["spatial_merge_size"] = vision.spatial_merge_size;
  config["text_config"] = text_config;
  config["tie_word_embeddings"] = spec.resolved_tie();
  config["torch_dtype"] = torch_dtype_of(spec);
  config["vision_config"] = vision_config;
  config["vision_feature_layer"] = -1;
  if (Json quantization = quantization_json(spec); !quantization.is_null()) {
    config["quantization_config"] = quantization;
  }
  return config;
}

std::vector<std::pair<std::string, std::string>> mistral3_processor_files(
    const RandomModelSpec& spec) {
  const VisionSpec& vision = spec.vision;
  const Json preprocessor = {{"crop_size", nullptr},
                             {"do_center_crop", nullptr},
                             {"do_convert_rgb", true},
                             {"do_normalize", true},
                             {"do_rescale", true},
                             {"do_resize", true},
                             {"image_mean", {0.48145466, 0.4578275, 0.40821073}},
                             {"image_processor_type", "PixtralImageProcessor"},
                             {"image_std", {0.26862954, 0.26130258, 0.27577711}},
                             {"patch_size", vision.patch_size},
                             {"processor_class", "PixtralProcessor"},
                             {"resample", 3},
                             {"rescale_factor", 0.00392156862745098},
                             {"size", {{"longest_edge", vision.image_size}}}};
  const Json processor = {{"image_break_token", "[IMG_BREAK]"},
                          {"image_end_token", "[IMG_END]"},
                          {"image_token", "[IMG]"},
                          {"patch_size", vision.patch_size},
                          {"processor_class", "PixtralProcessor"},
                          {"spatial_merge_size", vision.spatial_merge_size}};
  return {{"preprocessor_config.json", text_of(preprocessor)},
          {"processor_config.json", text_of(processor)}};
}

void plan_mistral3_vision(TensorBuilder& b, const std::string& tower,
                          const std::string& projector) {
  const RandomModelSpec& spec = b.spec();
  const VisionSpec& vision = spec.vision;
  const std::int64_t width = vision.hidden;
  const std::int64_t inner = vision.intermediate;
  const std::int64_t patch = vision.patch_size;
  const auto weight = [&](const std::string& name, std::int64_t out, std::int64_t in) {
    b.dense(name, {out, in}, 0.0, inverse_root(in));
  };
  // RMSNorm weights lie around 1.
  const auto norm = [&](const std::string& name, std::int64_t size) {
    b.dense(name, {size}, 1.0, 0.1);
  };
  b.dense(tower + "patch_conv.weight", {width, 3, patch, patch}, 0.0,
          inverse_root(3 * patch * patch));
  norm(tower + "ln_pre.weight", width);
  for (int i = 0; i < vision.layers; ++i) {
    const std::string layer = tower + "transformer.layers." + std::to_string(i) + ".";
    norm(layer + "attention_norm.weight", width);
    for (const char* projection : {"q_proj", "k_proj", "v_proj", "o_proj"})
      weight(layer + "attention." + projection + ".weight", width, width);
    norm(layer + "ffn_norm.weight", width);
    weight(layer + "feed_forward.gate_proj.weight", inner, width);
    weight(layer + "feed_forward.up_proj.weight", inner, width);
    weight(layer + "feed_forward.down_proj.weight", width, inner);
  }
  const std::int64_t merge = vision.spatial_merge_size;
  const std::int64_t text = spec.hidden;
  norm(projector + "norm.weight", width);
  weight(projector + "patch_merger.merging_layer.weight", width, width * merge * merge);
  weight(projector + "linear_1.weight", text, width);
  if (vision.projector_bias) b.dense(projector + "linear_1.bias", {text}, 0.0, 0.1);
  weight(projector + "linear_2.weight", text, text);
  if (vision.projector_bias) b.dense(projector + "linear_2.bias", {text}, 0.0, 0.1);
}

void validate_mistral3_vision(const RandomModelSpec& spec) {
  const VisionSpec& vision = spec.vision;
  check_range("vision_hidden", vision.hidden, 8, 4096);
  check_range("vision_heads", vision.heads, 1, vision.hidden);
  if (vision.hidden % vision.heads != 0 || (vision.hidden / vision.heads) % 2 != 0) {
    reject("vision_heads", std::to_string(vision.heads) + " must divide the vision width (" +
                               std::to_string(vision.hidden) +
                               ") into heads of an even size (the rotary embedding turns pairs)");
  }
  check_range("vision_intermediate", vision.intermediate, 8, 16384);
  check_range("vision_layers", vision.layers, 1, 32);
  check_range("patch_size", vision.patch_size, 1, 64);
  check_range("spatial_merge_size", vision.spatial_merge_size, 1, 8);
  const int step = vision.patch_size * vision.spatial_merge_size;
  check_range("image_size", vision.image_size, step, 4096);
  if (vision.image_size % step != 0) {
    reject("image_size", std::to_string(vision.image_size) +
                             " is not a multiple of patch_size x spatial_merge_size (" +
                             std::to_string(step) + ")");
  }
}

}  // namespace quire::engine::modelgen::detail
