// The language models of Qwen's vision-language downloads, read as the text
// models they extend: Qwen2-VL and Qwen2.5-VL as Qwen2 (biases on q, k and
// v), Qwen3-VL as Qwen3 (q/k norms). What sets them apart is M-RoPE
// (rope_scaling.mrope_section): each position carries temporal, height and
// width ids, which the forward pass takes per token (ForwardPass::Sequence::
// rope_positions; engine/runtime mrope_positions.h).
//
// Their files come in two layouts: as first published, "model.layers.*",
// "model.embed_tokens" and "lm_head" beside the tower's "visual.*"; as newer
// transformers save them, "model.language_model.*" and "model.visual.*". The
// language model's keys sit at the top level of config.json, or under
// "text_config" in newer files. The vision tower is left on disk.
//
// Qwen3-VL's text model also takes "deepstack" features (the tower's
// intermediate layers added to the hidden state of the first layers at the
// image's positions), which only matter once images reach the model.

#include "architectures.h"

namespace quire::engine::architectures {
namespace {

void apply_qwen2_text(ModelConfig& config) {
  config.attention_bias = true;
  config.attention_output_bias = false;
  config.mlp_bias = false;
  apply_qwen_windows(config);
}

void apply_qwen3_text(ModelConfig& config) {
  config.attention_output_bias = config.attention_bias;
  config.mlp_bias = false;
  config.qk_norm = true;
  apply_qwen_windows(config);
}

const std::vector<std::string> kQwenVlPrefixes = {"model.", "model.language_model."};

}  // namespace

const Architecture& qwen2_vl() {
  static const Architecture architecture{.name = "Qwen2VLForConditionalGeneration",
                                         .label = "Qwen2-VL",
                                         .apply = apply_qwen2_text,
                                         .text_prefixes = kQwenVlPrefixes,
                                         .multimodal = true};
  return architecture;
}

const Architecture& qwen2_5_vl() {
  static const Architecture architecture{.name = "Qwen2_5_VLForConditionalGeneration",
                                         .label = "Qwen2.5-VL",
                                         .apply = apply_qwen2_text,
                                         .text_prefixes = kQwenVlPrefixes,
                                         .multimodal = true};
  return architecture;
}

const Architecture& qwen3_vl() {
  static const Architecture architecture{.name = "Qwen3VLForConditionalGeneration",
                                         .label = "Qwen3-VL",
                                         .apply = apply_qwen3_text,
                                         .text_prefixes = kQwenVlPrefixes,
                                         .multimodal = true};
  return architecture;
}

}  // namespace quire::engine::architectures
