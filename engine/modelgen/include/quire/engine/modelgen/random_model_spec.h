#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "quire/kernels/linear_weight.h"

namespace quire::engine::modelgen {

// How the linear layers are stored.
// FP8: compressed-tensors' float-quantized checkpoint as llm-compressor
// writes it (F8_E4M3 projections with weight_scale, every other tensor in
// BF16, lm_head left out); FP8_TENSOR with one scale per tensor, FP8 with
// one per output row. EXL3: exllamav3's layout with random trellis symbols
// (any symbols are a valid EXL3 tensor), a quantized head even where the
// embeddings are tied, as its converter writes it. W4A16 and W8A16:
// compressed-tensors' pack-quantized checkpoints as llm-compressor writes its
// W4A16 (symmetric, or with zero points as W4A16_ASYM) and W8A16 schemes;
// INT8: its naive-quantized int8 weights; all three keep every other tensor
// in BF16 and leave lm_head (and MoE routers) out. AWQ: AutoAWQ's GEMM
// layout, FP16 elsewhere.
enum class WeightFormat : std::uint8_t {
  FP16,
  BF16,
  EXL2,
  GPTQ,
  FP8,
  FP8_TENSOR,
  EXL3,
  W4A16,
  W8A16,
  INT8,
  AWQ
};

struct FormatSpec {
  WeightFormat kind = WeightFormat::FP16;
  // Mean width of the EXL2 projections, 2.0 to 8.0; unused otherwise.
  double exl2_bits = 4.0;
  // EXL3: the mean bits per weight, 1.0 to 8.0 (each tensor gets a whole
  // number, the two around the mean mixed to reach it), and the codebook.
  double exl3_bits = 4.0;
  kernels::Exl3Codebook exl3_codebook = kernels::Exl3Codebook::mul1;
  // GPTQ: 4 or 8 bits.
  int gptq_bits = 4;
  // W4A16 and W8A16: zero points (an asymmetric scheme, "w4a16-asym").
  bool zero_points = false;
};

struct RopeScalingSpec {
  enum class Type : std::uint8_t { None, Linear, Dynamic, Llama3, Yarn, LongRope };
  Type type = Type::None;
  double factor = 1.0;  // llama3: 8 unless given; unused by longrope
  // llama3, yarn and longrope: the trained context. 0: kLlama3OriginalContext
  // for llama3, kLongRopeOriginalContext for longrope; for yarn the key is
  // left out (readers use max_position_embeddings).
  std::int64_t original_max_position_embeddings = 0;
  double low_freq_factor = 1.0;   // llama3
  double high_freq_factor = 4.0;  // llama3

  bool operator==(const RopeScalingSpec&) const = default;
};

// Original context of llama3 scaling in generated models: small, so that
// short test prompts already reach the scaled frequencies' range.
inline constexpr std::int64_t kLlama3OriginalContext = 64;
// The same for Phi-3's longrope: prompts longer than this switch from the
// short factors to the long ones.
inline constexpr std::int64_t kLongRopeOriginalContext = 16;

// Gemma's tanh soft-capping of attention scores and final logits; 0 is off
// (written as null).
struct SoftcapSpec {
  double attention = 0.0;
  double final = 0.0;
};

// Mixture-of-experts layers (mixtral, qwen3_moe): a dense router picks
// experts_per_token of `experts` MLPs for every token.
struct MoeSpec {
  int experts = 4;
  int experts_per_token = 2;
  // qwen3_moe's moe_intermediate_size; 0: intermediate / 2. Mixtral's experts
  // are intermediate wide.
  int expert_intermediate = 0;
  // qwen3_moe: layers with a dense MLP of `intermediate` instead of experts,
  // and the step of sparse layers (layer i is sparse when (i + 1) % step == 0).
  std::vector<int> mlp_only_layers;
  int decoder_sparse_step = 1;
  bool norm_topk_prob = true;  // qwen3_moe: renormalise the chosen experts' weights
};

// A vision tower scaled down: Gemma 3's SigLIP tower and projector,
// Mistral 3's Pixtral tower and projector, or Qwen2.5-VL's ViT and patch
// merger (whose output width is the text model's hidden). A text-only reader
// leaves them on disk; they make the directory look like the download.
struct VisionSpec {
  int hidden = 64;
  int intermediate = 128;
  int heads = 2;
  int layers = 1;
  int patch_size = 14;
  // Gemma 3 and Mistral 3 (for Mistral 3 the longest side).
  int image_size = 56;
  int tokens_per_image = 4;  // gemma3's mm_tokens_per_image: patches average-pooled to this many
  // mistral: squares of spatial_merge_size patches become one token;
  // multimodal_projector_bias.
  int spatial_merge_size = 2;
  bool projector_bias = false;
  // Qwen2.5-VL only: patches merged per side into a token, frames per
  // patch, the attention window's side in pixels, and the blocks that
  // attend over the whole image.
  int merge_size = 2;
  int temporal_patch_size = 2;
  int window_size = 112;
  std::vector<int> fullatt_blocks;
};

// Fewest tokenizer pieces the trainer accepts for the built-in corpus: 256
// byte pieces, <unk>, <s>, </s> and enough of the alphabet.
inline constexpr int kMinVocab = 320;
// The built-in corpus trains up to about 6900 pieces; this leaves a margin.
inline constexpr int kMaxVocab = 4096;
// Embedding rows with a tokenizer copied from elsewhere (Gemma 3 has 262208).
inline constexpr int kMaxCopiedVocab = 1 << 19;

// A small random model in the layout of a downloaded Hugging Face /
// exllamav2 model directory. default_spec() gives each family the settings of
// its published models (Gemma's window and soft-capping, Mixtral's theta);
// a value-initialised spec is the plain Llama-style default.
struct RandomModelSpec {
  // llama, mistral, qwen2, qwen3, gemma2, gemma3, phi3, mixtral, qwen3_moe
  // or qwen2_5_vl (Qwen2-style text layers and a vision tower)
  std::string architecture = "llama";
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
  // Every family but llama. Gemma slides on some layers only (see
  // sliding_window_pattern) and needs one.
  std::optional<int> sliding_window;
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
  // W4A16, W8A16, INT8 and AWQ: inputs per group, or 0 for one scale per
  // output row (compressed-tensors' "channel", AutoAWQ's group_size -1);
  // unset: the scheme's own (W4A16 and AWQ 128, W8A16 and INT8 per row).
  std::optional<int> group_size;
  // W4A16 and W8A16: group actorder (weight_g_idx).
  bool actorder = false;
  // EXL2: width of every head group (2, 3, 4, 5, 6 or 8)
  int exl2_head_bits = 6;
  // EXL3: bits of the head (1 to 8), or 16 for an FP16 head
  int exl3_head_bits = 6;

  // Gemma 2 and 3.
  SoftcapSpec softcap;
  double query_pre_attn_scalar = 0.0;  // the attention scale is its -1/2 power; 0: head_dim
  // Layer i slides when (i + 1) % pattern != 0; 0: the family's (Gemma 2
  // alternates, 2; Gemma 3 has five sliding layers to one full, 6).
  int sliding_window_pattern = 0;
  bool write_layer_types = false;     // config.json lists every layer's attention
  double rope_local_theta = 10000.0;  // gemma3: rope_local_base_freq of sliding layers
  // gemma3: Gemma3ForConditionalGeneration with a vision tower (mistral:
  // Mistral3ForConditionalGeneration, as Mistral Small 3.1); the text
  // weights under text_prefix ("language_model.model." as published, or
  // "model.language_model." as newer transformers save). qwen2_5_vl always
  // has its tower: text_prefix "model." as published (tower "visual."), or
  // "model.language_model." (tower "model.visual.").
  bool multimodal = false;
  std::string text_prefix = "language_model.model.";
  VisionSpec vision;

  // Phi-3: the share of each head that rotates.
  double partial_rotary_factor = 1.0;

  MoeSpec moe;

  // A published config.json (its text) that config.json is made from: every
  // key as written there except the shapes, the ids beyond the vocabulary
  // and what this spec sets differently (see published_config.h).
  std::string published_config;

  int resolved_head_dim() const { return head_dim != 0 ? head_dim : hidden / heads; }
  double resolved_query_pre_attn_scalar() const {
    return query_pre_attn_scalar != 0.0 ? query_pre_attn_scalar : resolved_head_dim();
  }
  int resolved_sliding_window_pattern() const {
    return sliding_window_pattern != 0 ? sliding_window_pattern
                                       : (architecture == "gemma3" ? 6 : 2);
  }
  int resolved_expert_intermediate() const {
    return moe.expert_intermediate != 0 ? moe.expert_intermediate : intermediate / 2;
  }
  // Dimensions of each head that rotate (Phi-3's partial rotary factor).
  int rotary_dim() const;
  int resolved_tokenizer_vocab() const { return tokenizer_vocab != 0 ? tokenizer_vocab : vocab; }
  // group_size or the scheme's own; 0: one group per output row.
  int resolved_group_size() const {
    if (group_size) return *group_size;
    return format.kind == WeightFormat::W4A16 || format.kind == WeightFormat::AWQ ? 128 : 0;
  }
  bool resolved_tie() const { return tie_embeddings.value_or(format.kind != WeightFormat::EXL2); }
};

// The architectures make-model writes, in the order help texts list them.
std::span<const std::string_view> architecture_names();

// A spec of the family's published defaults at the small default size:
// gemma2 RMS eps 1e-6, soft-capping 50 and 30, window 4096; gemma3 theta 1e6,
// window 512, no soft-capping; phi3 window 262144 as Phi-3.5; mixtral and
// qwen3_moe theta 1e6. The first four families get RandomModelSpec{} as it
// is. Throws std::invalid_argument naming "arch" for an unknown family.
RandomModelSpec default_spec(std::string_view architecture);

// Throws std::invalid_argument whose message starts with the offending
// option's name ("kv_heads: ...") and says what is allowed.
void validate(const RandomModelSpec& spec);

// "fp16", "bf16", "gptq" (4-bit), "gptq:8", "fp8", "fp8-tensor",
// "w4a16", "w4a16-asym", "w8a16", "w8a16-asym", "int8", "awq",
// "exl2:BITS" (BITS 2.0 to 8.0) or "exl3:BITS[:CODEBOOK]" (BITS 1.0 to 8.0;
// CODEBOOK mul1, the default, mcg or 3inst). Throws std::invalid_argument
// naming "format".
FormatSpec parse_format(std::string_view text);
std::string to_string(const FormatSpec& format);  // "exl2:4.0", "exl3:3.5:mcg"

// "none", "linear:F", "dynamic:F", "llama3", "llama3:F[:ORIGINAL[:LOW:HIGH]]",
// "yarn:F[:ORIGINAL]" (F >= 1) or "longrope[:ORIGINAL]". Throws
// std::invalid_argument naming "rope_scaling".
RopeScalingSpec parse_rope_scaling(std::string_view text);
std::string to_string(const RopeScalingSpec& scaling);

// "llama, exl2:4.0, 2 layers, hidden 128, vocab 512"
std::string describe(const RandomModelSpec& spec);

}  // namespace quire::engine::modelgen
