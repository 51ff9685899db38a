#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace quire::engine {

// rope_scaling from config.json. Types Quire runs: none, linear, dynamic
// (NTK-aware, by the longest position in a step), llama3 and yarn.
struct RopeScaling {
  enum class Type : std::uint8_t { None, Linear, Dynamic, Llama3, Yarn };
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
};

struct QuantizationConfig {
  std::string method;             // "exl2", "gptq", or empty
  std::string checkpoint_format;  // "gptq_v2" marks exact GPTQ zeros
};

// The parts of config.json the engine uses. Multimodal configs keep these keys
// under "text_config"; a key missing at the top level is looked up there.
struct ModelConfig {
  std::string architecture;  // architectures[0]
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
  bool tie_word_embeddings = false;
  bool attention_bias = false;  // bias on q, k, v (and o for Llama's attention_bias)
  bool attention_output_bias = false;
  bool mlp_bias = false;
  // RMSNorm over each query and key head (weights of head_dim) before RoPE:
  // Qwen3's q_norm and k_norm.
  bool qk_norm = false;
  std::string torch_dtype;
  QuantizationConfig quantization;

  int rotary_dim() const;
};

// Reads and checks dir/config.json. Throws ModelError naming the key and what
// to do when something is missing, malformed or cannot be run.
ModelConfig load_model_config(const std::filesystem::path& model_dir);

// The same, from JSON text; `source` names it in messages.
ModelConfig parse_model_config(const std::string& json_text, const std::string& source);

}  // namespace quire::engine
