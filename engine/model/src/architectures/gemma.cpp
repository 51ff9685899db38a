// Gemma 2 and Gemma 3. What they share, as transformers' modeling code runs
// them: embeddings times sqrt(hidden) (rounded to the weights' dtype), every
// RMSNorm weight used as (1 + w), four norms per layer (the attention's and
// the MLP's outputs are normalized before each residual add), a GELU (tanh)
// gated MLP, attention scaled by query_pre_attn_scalar^-0.5, sliding windows
// on some layers only, and tied embeddings.
//
// Gemma 2 soft-caps attention scores and the final logits, and slides on
// every other layer starting with the first. Gemma 3 drops the caps, adds
// per-head q/k norms, and makes one layer in six global: the others slide and
// rotate with rope_local_base_freq, unscaled. Its larger downloads are
// multimodal: the language model's keys sit under "text_config" and its
// tensors under "language_model.model." (or "model.language_model." as newer
// transformers save them), beside a vision tower Quire leaves on disk.

#include "architectures.h"

namespace quire::engine::architectures {
namespace {

void apply_gemma(ModelConfig& config) {
  config.attention_output_bias = config.attention_bias;
  config.mlp_bias = false;
  config.norm_weight_offset = 1.0;
  config.sandwich_norms = true;
  config.scale_embeddings = true;
}

void apply_gemma2(ModelConfig& config) {
  apply_gemma(config);
  apply_layer_types(config, [](int layer) { return (layer + 1) % 2 != 0; });
}

void apply_gemma3(ModelConfig& config) {
  apply_gemma(config);
  config.qk_norm = true;
  const int pattern = config.sliding_window_pattern.value_or(6);
  apply_layer_types(config, [pattern](int layer) { return (layer + 1) % pattern != 0; });
  if (!config.rope_local_theta) config.rope_local_theta = 10000.0;
}

constexpr LayerNaming kGemmaNaming{.attention_output_norm = "post_attention_layernorm",
                                   .mlp_norm = "pre_feedforward_layernorm",
                                   .mlp_output_norm = "post_feedforward_layernorm"};

// Gemma2Config's defaults (transformers), for keys a file leaves out.
constexpr std::string_view kGemma2Defaults = R"({
  "vocab_size": 256000, "hidden_size": 2304, "intermediate_size": 9216,
  "num_hidden_layers": 26, "num_attention_heads": 8, "num_key_value_heads": 4,
  "head_dim": 256, "hidden_activation": "gelu_pytorch_tanh", "max_position_embeddings": 8192,
  "rms_norm_eps": 1e-6, "rope_theta": 10000.0, "attention_bias": false,
  "query_pre_attn_scalar": 256, "sliding_window": 4096, "final_logit_softcapping": 30.0,
  "attn_logit_softcapping": 50.0, "tie_word_embeddings": true})";

// Gemma3TextConfig's defaults: gemma-3-4b-it's text_config writes only a
// few keys and relies on these.
constexpr std::string_view kGemma3Defaults = R"({
  "vocab_size": 262208, "hidden_size": 2304, "intermediate_size": 9216,
  "num_hidden_layers": 26, "num_attention_heads": 8, "num_key_value_heads": 4,
  "head_dim": 256, "hidden_activation": "gelu_pytorch_tanh", "max_position_embeddings": 131072,
  "rms_norm_eps": 1e-6, "rope_theta": 1000000.0, "attention_bias": false,
  "query_pre_attn_scalar": 256, "sliding_window": 4096, "rope_local_base_freq": 10000.0,
  "sliding_window_pattern": 6, "tie_word_embeddings": true})";

}  // namespace

const Architecture& gemma2() {
  static const Architecture architecture{.name = "Gemma2ForCausalLM",
                                         .label = "Gemma 2",
                                         .apply = apply_gemma2,
                                         .naming = kGemmaNaming,
                                         .defaults = kGemma2Defaults};
  return architecture;
}

const Architecture& gemma3_text() {
  static const Architecture architecture{.name = "Gemma3ForCausalLM",
                                         .label = "Gemma 3",
                                         .apply = apply_gemma3,
                                         .naming = kGemmaNaming,
                                         .defaults = kGemma3Defaults};
  return architecture;
}

const Architecture& gemma3_multimodal() {
  static const Architecture architecture{
      .name = "Gemma3ForConditionalGeneration",
      .label = "Gemma 3 (multimodal)",
      .apply = apply_gemma3,
      .naming = kGemmaNaming,
      .defaults = kGemma3Defaults,
      .text_prefixes = {"language_model.model.", "model.language_model."},
      .heads = {"language_model.lm_head", "lm_head"},
      .multimodal = true};
  return architecture;
}

}  // namespace quire::engine::architectures
