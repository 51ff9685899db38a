#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace quire::engine {

// rope_scaling from config.json. Types Quire runs: none, linear, dynamic
// (NTK-aware, by the longest position in a step), llama3, yarn and longrope.
struct RopeScaling {
  enum class Type : std::uint8_t { None, Linear, Dynamic, Llama3, Yarn, LongRope };
  Type type = Type::None;
  double factor = 1.0;
  double low_freq_factor = 1.0;   // llama3
  double high_freq_factor = 4.0;  // llama3
  // llama3 and yarn: the context the model was trained at. Yarn without the
  // key uses max_position_embeddings.
  std::int64_t original_max_position_embeddings = 0;
  // yarn: the rotations that bound the blend between extrapolated and
  // interpolated frequencies, and how cos and sin are scaled.
  double beta_fast = 32.0;
  double beta_slow = 1.0;
  std::optional<double> attention_factor;  // given: used as is
  double mscale = 0.0;                     // with mscale_all_dim (DeepSeek style); 0: unset
  double mscale_all_dim = 0.0;
  bool truncate = true;  // round the blend's bounds to whole dimensions
  // longrope (Phi-3): per-frequency divisors, the short ones up to the
  // original context and the long ones beyond it; factor is then
  // max_position_embeddings / original when the file gives the original at
  // its top level, as Phi-3's do.
  std::vector<double> short_factor;
  std::vector<double> long_factor;
  bool factor_from_positions = false;
  // M-RoPE (Qwen2-VL, Qwen2.5-VL, Qwen3-VL): "mrope_section", how many
  // rotary frequencies turn by each of a token's temporal, height and width
  // ids ([16, 24, 24] for head_dim 128); empty: one position per token.
  // Written beside rope_type "default", or as type "mrope" in older files.
  std::vector<int> mrope_section;
  // "mrope_interleaved" (Qwen3-VL): the axes take turns over the frequencies
  // instead of holding one run each (kernels::RopeParams).
  bool mrope_interleaved = false;
};

// The activation of the gated MLP ("hidden_act" / "hidden_activation").
enum class Activation : std::uint8_t {
  Silu,      // "silu"
  GeluTanh,  // "gelu_pytorch_tanh": Gemma
};

// A sparse MLP in place of the dense one (Mixtral, Qwen3-MoE): a router
// scores every expert per token, the top experts_per_token run and their
// outputs are summed, weighted by the router's softmax.
struct MixtureOfExperts {
  int experts = 0;  // 0: a dense model
  int experts_per_token = 0;
  std::int64_t intermediate_size = 0;  // of each expert
  bool normalize_top_k = true;         // the chosen weights renormalized to sum to 1
  // As written (Qwen3-MoE): every sparse_step-th layer routes, except the
  // dense_layers ("mlp_only_layers"). The architecture turns them into:
  int sparse_step = 1;
  std::vector<int> dense_layers;
  std::vector<bool> sparse_layers;  // per layer: routed, or a dense MLP

  bool sparse(std::size_t layer) const {
    return layer < sparse_layers.size() && sparse_layers[layer];
  }
};

// quantization_config.kv_cache_scheme, as llm-compressor (compressed-tensors)
// writes it: how the checkpoint's author calibrated the K/V cache. Quire uses
// static, symmetric 8-bit float scales per tensor ("tensor") or per KV head
// ("attn_head"), read from each layer's self_attn.k_scale and v_scale.
struct KvCacheScheme {
  int num_bits = 8;
  std::string type = "float";       // "float" or "int"
  std::string strategy = "tensor";  // "tensor", "attn_head", or another of compressed-tensors'
  std::string dynamic = "false";    // "false", "true", or compressed-tensors' "local"
  bool symmetric = true;

  bool per_head() const { return strategy == "attn_head"; }
  // Why Quire's FP8 cache cannot use this scheme's scales (naming the field),
  // or empty when it can.
  std::string unsupported_reason() const;
};

// One QuantizationArgs of compressed-tensors' config_groups: how a group's
// weights (or input activations) are quantized, as written, with the
// inferences compressed-tensors makes (quantization/quant_args.py): a
// missing strategy follows from group_size (none: "tensor", -1: "channel",
// positive: "group"), and actorder true, "dynamic" and "static" are "group",
// "group" and "weight".
struct CompressedTensorsArgs {
  int num_bits = 8;
  std::string type = "int";  // "int" or "float"
  bool symmetric = true;
  std::string strategy;  // "tensor", "channel", "group", "block", "token", "tensor_group", ...
  int group_size = 0;    // 0: none written
  std::string actorder;  // "", "group" or "weight"
  std::string dynamic = "false";  // "false", "true" or "local"
};

// One entry of config_groups: the modules it targets ("Linear", a module's
// name, or "re:" and a regular expression matched from the start of the
// name) and their schemes.
struct CompressedTensorsGroup {
  std::string name;  // "group_0"
  std::vector<std::string> targets;
  std::optional<CompressedTensorsArgs> weights;
  std::optional<CompressedTensorsArgs> input_activations;
  std::string format;  // the group's own format (a "mixed-precision" model), or empty
};

struct QuantizationConfig {
  std::string method;             // "exl2", "gptq", "awq", "compressed-tensors", or empty
  std::string checkpoint_format;  // "gptq_v2" marks exact GPTQ zeros
  // compressed-tensors' "format": "float-quantized" (FP8, which Quire runs),
  // "pack-quantized", "int-quantized", ...
  std::string format;
  std::optional<KvCacheScheme> kv_cache_scheme;
  // GPTQ and AWQ: "bits" ("w_bit" in AutoAWQ's own files) and "group_size"
  // ("q_group_size"; -1: one group per output row); 0 when not written.
  int bits = 0;
  int group_size = 0;
  // AWQ: "version" (lower case: "gemm", "gemv", ...), "zero_point" and
  // "modules_to_not_convert".
  std::string version;
  bool zero_point = true;
  std::vector<std::string> modules_not_converted;
  // compressed-tensors: config_groups in file order, "ignore" and
  // "quantization_status" ("compressed" for checkpoints written packed).
  std::vector<CompressedTensorsGroup> groups;
  std::vector<std::string> ignore;
  std::string status;

  // The group whose targets match the linear layer `module` (its tensor key,
  // "model.layers.0.mlp.up_proj") when `ignore` does not name it, as
  // compressed-tensors matches them; the first such group, or nullptr.
  const CompressedTensorsGroup* group_for(std::string_view module) const;
};

// The parts of config.json the engine uses. Multimodal configs keep these keys
// under "text_config"; a key missing at the top level is looked up there.
struct ModelConfig {
  std::string architecture;  // architectures[0]
  std::string model_type;
  std::int64_t hidden_size = 0;
  int num_layers = 0;
  int num_heads = 0;
  int num_kv_heads = 0;
  int head_dim = 0;
  std::int64_t intermediate_size = 0;
  std::int64_t vocab_size = 0;
  double rms_norm_eps = 1e-6;
  double rope_theta = 10000.0;
  double partial_rotary_factor = 1.0;
  RopeScaling rope_scaling;
  std::int64_t max_position_embeddings = 0;
  // As written in config.json; the architecture turns them into sliding_windows.
  std::optional<std::int64_t> sliding_window;
  std::optional<bool> use_sliding_window;
  std::optional<int> max_window_layers;
  std::vector<std::string> layer_types;  // "full_attention" / "sliding_attention"
  // Per layer: attention window in tokens, 0 for full attention.
  std::vector<int> sliding_windows;
  // Layer `layer`'s window where it hides keys from a sequence of at most
  // max_position_embeddings tokens, else 0. A query sees the keys less than
  // a window behind it, so a window of max_position_embeddings or more hides
  // none: Phi-3.5-mini and Phi-4-mini name 262144 over 131072 positions.
  int binding_window(std::size_t layer) const;
  // The binding window when every layer has the same one, else 0.
  int uniform_sliding_window() const;
  bool tie_word_embeddings = false;
  bool attention_bias = false;  // bias on q, k, v (and o for Llama's attention_bias)
  bool attention_output_bias = false;
  bool mlp_bias = false;
  // RMSNorm over each query and key head (weights of head_dim) before RoPE:
  // Qwen3's q_norm and k_norm.
  bool qk_norm = false;
  Activation activation = Activation::Silu;
  // Gemma: every RMSNorm weight is used as (1 + w).
  double norm_weight_offset = 0.0;
  // Gemma 2 and 3: the attention's and the MLP's outputs are normalized
  // before each residual add (post_attention / post_feedforward_layernorm),
  // besides the usual norms before them.
  bool sandwich_norms = false;
  // Gemma: the embeddings are multiplied by sqrt(hidden_size), a factor
  // first rounded to the embedding's dtype as transformers does.
  bool scale_embeddings = false;
  // Gemma: attention scores scale by query_pre_attn_scalar^-0.5 instead of
  // head_dim^-0.5.
  std::optional<double> query_pre_attn_scalar;
  // Gemma 2: score -> cap * tanh(score / cap), on attention scores and on
  // the final logits; 0: none.
  double attention_softcap = 0.0;
  double final_softcap = 0.0;
  // Gemma 3: sliding-window layers rotate with this base and no scaling;
  // the global layers with rope_theta and rope_scaling.
  std::optional<double> rope_local_theta;
  // Gemma 3 without "layer_types": one global layer in this many.
  std::optional<int> sliding_window_pattern;
  MixtureOfExperts moe;
  std::string torch_dtype;
  QuantizationConfig quantization;

  int rotary_dim() const;
  double attention_scale() const;
  // Whether layer `layer` rotates with rope_local_theta.
  bool local_rope(std::size_t layer) const {
    return rope_local_theta.has_value() && sliding_windows.at(layer) > 0;
  }
};

// Reads and checks dir/config.json. Throws ModelError naming the key and what
// to do when something is missing, malformed or cannot be run.
ModelConfig load_model_config(const std::filesystem::path& model_dir);

// The same, from JSON text; `source` names it in messages.
ModelConfig parse_model_config(const std::string& json_text, const std::string& source);

}  // namespace quire::engine
