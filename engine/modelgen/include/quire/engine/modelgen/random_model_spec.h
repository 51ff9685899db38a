#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace quire::engine::modelgen {

// How the linear layers are stored.
enum class WeightFormat : std::uint8_t { FP16, BF16, EXL2, GPTQ };

struct FormatSpec {
  WeightFormat kind = WeightFormat::FP16;
  // Mean width of the EXL2 projections, 2.0 to 8.0; unused otherwise (GPTQ is 4-bit).
  double exl2_bits = 4.0;
};

struct RopeScalingSpec {
  enum class Type : std::uint8_t { None, Linear, Dynamic, Llama3, Yarn };
  Type type = Type::None;
  double factor = 1.0;  // llama3: 8 unless given
  // llama3 and yarn: the trained context. 0: kLlama3OriginalContext for
  // llama3; for yarn the key is left out (readers use max_position_embeddings).
  std::int64_t original_max_position_embeddings = 0;
  double low_freq_factor = 1.0;   // llama3
  double high_freq_factor = 4.0;  // llama3
};

// Original context of llama3 scaling in generated models: small, so that
// short test prompts already reach the scaled frequencies' range.
inline constexpr std::int64_t kLlama3OriginalContext = 64;

// Fewest tokenizer pieces the trainer accepts for the built-in corpus: 256
// byte pieces, <unk>, <s>, </s> and enough of the alphabet.
inline constexpr int kMinVocab = 320;
// The built-in corpus trains up to about 6900 pieces; this leaves a margin.
inline constexpr int kMaxVocab = 4096;
// Embedding rows with a tokenizer copied from elsewhere (Gemma 3 has 262208).
inline constexpr int kMaxCopiedVocab = 1 << 19;

// A small random model of a Llama-family architecture, in the layout of a
// downloaded Hugging Face / exllamav2 model directory.
struct RandomModelSpec {
  std::string architecture = "llama";  // "llama", "mistral", "qwen2" or "qwen3"
  FormatSpec format;
  int layers = 2;
  int hidden = 128;
  int heads = 4;
  int kv_heads = 2;
  int head_dim = 0;  // 0: hidden / heads
  int intermediate = 256;
  // Embedding rows. With tokenizer_from, 0 means the tokenizer's size.
  int vocab = 512;
  // Pieces of the trained tokenizer; 0: vocab. Fewer than vocab pads the
  // embedding beyond the tokenizer, as Qwen2.5's is.
  int tokenizer_vocab = 0;
  // A model directory whose tokenizer files (tokenizer.json,
  // tokenizer_config.json, special_tokens_map.json, generation_config.json,
  // chat_template.jinja, tokenizer.model) are copied instead of training one;
  // config.json's BOS and EOS ids come from them.
  std::optional<std::filesystem::path> tokenizer_from;
  std::uint64_t seed = 1;
  // Unset: tied for FP16, BF16 and GPTQ; untied for EXL2, whose head is quantized.
  std::optional<bool> tie_embeddings;
  std::optional<int> sliding_window;  // mistral and qwen2 only
  RopeScalingSpec rope_scaling;
  // config.json's "torch_dtype"; empty: the weights' (float16 or bfloat16).
  std::string torch_dtype;
  // BOS and EOS ids for config.json and generation_config.json; EOS may be a
  // list (Llama 3.1 ends a reply at any of three). Unset: 1 and {2}.
  std::optional<int> bos_id;
  std::vector<int> eos_ids;
  // Keys written into config.json after (and over) the generated ones, each
  // value as JSON text: "sliding_window" = "null", "max_window_layers" = "28".
  // They describe the model to readers; the tensors do not depend on them.
  std::vector<std::pair<std::string, std::string>> extra_config;
  double rope_theta = 10000.0;
  double rms_norm_eps = 1e-5;
  std::int64_t max_position_embeddings = 2048;
  int shards = 1;  // > 1: model-0000i-of-0000N.safetensors and an index
  // GPTQ
  int gptq_group_size = 32;  // a power of two
  bool gptq_act_order = true;
  bool gptq_v2 = false;  // checkpoint_format "gptq_v2": zero points stored exactly
  // EXL2: width of every head group (2, 3, 4, 5, 6 or 8)
  int exl2_head_bits = 6;

  int resolved_head_dim() const { return head_dim != 0 ? head_dim : hidden / heads; }
  int resolved_tokenizer_vocab() const { return tokenizer_vocab != 0 ? tokenizer_vocab : vocab; }
  bool resolved_tie() const { return tie_embeddings.value_or(format.kind != WeightFormat::EXL2); }
};

// Throws std::invalid_argument whose message starts with the offending
// option's name ("kv_heads: ...") and says what is allowed.
void validate(const RandomModelSpec& spec);

// "fp16", "bf16", "gptq" or "exl2:BITS" (BITS 2.0 to 8.0). Throws
// std::invalid_argument naming "format".
FormatSpec parse_format(std::string_view text);
std::string to_string(const FormatSpec& format);  // "exl2:4.0"

// "none", "linear:F", "dynamic:F", "llama3", "llama3:F[:ORIGINAL[:LOW:HIGH]]"
// or "yarn:F[:ORIGINAL]" (F >= 1). Throws std::invalid_argument naming
// "rope_scaling".
RopeScalingSpec parse_rope_scaling(std::string_view text);
std::string to_string(const RopeScalingSpec& scaling);

// "llama, exl2:4.0, 2 layers, hidden 128, vocab 512"
std::string describe(const RandomModelSpec& spec);

}  // namespace quire::engine::modelgen
