#include "quire/engine/modelgen/model_presets.h"

#include <array>
#include <stdexcept>
#include <string>

namespace quire::engine::modelgen {
namespace {

constexpr std::array<std::string_view, 12> kNames = {"llama-3.1-8b-instruct",
                                                     "llama-3.2-3b-instruct",
                                                     "qwen2.5-7b-instruct",
                                                     "qwen2.5-1.5b-instruct",
                                                     "mistral-7b-instruct-v0.3",
                                                     "mistral-nemo-instruct-2407",
                                                     "gemma-2-9b-it",
                                                     "gemma-3-4b-it",
                                                     "phi-3.5-mini-instruct",
                                                     "phi-4-mini-instruct",
                                                     "mixtral-8x7b-instruct-v0.1",
                                                     "qwen3-30b-a3b"};

// What every preset shares: two layers, BF16 weights as published, the
// family's published settings.
RandomModelSpec base(const char* architecture) {
  RandomModelSpec spec = default_spec(architecture);
  spec.format = {WeightFormat::BF16, 4.0};
  spec.layers = 2;
  spec.torch_dtype = "bfloat16";
  spec.seed = 1;
  return spec;
}

// Llama 3.x: theta 500000, llama3 scaling over an original 8192 tokens,
// 131072 positions, three EOS ids (end of text, end of message, end of turn).
RandomModelSpec llama3(double factor) {
  RandomModelSpec spec = base("llama");
  spec.rope_theta = 500000.0;
  spec.rope_scaling = {RopeScalingSpec::Type::Llama3, factor, 8192, 1.0, 4.0};
  spec.max_position_embeddings = 131072;
  spec.bos_id = 1;
  // Ids below the smallest trained vocabulary, so that any --vocab keeps them.
  spec.eos_ids = {2, kMinVocab - 2, kMinVocab - 1};
  return spec;
}

// Qwen2.5: q/k/v biases, theta 1e6, 32768 positions, a sliding window named
// but switched off, and an embedding padded beyond the tokenizer (7B: 152064
// rows for 151665 tokens).
RandomModelSpec qwen25(int sliding_window, int max_window_layers) {
  RandomModelSpec spec = base("qwen2");
  spec.rope_theta = 1e6;
  spec.max_position_embeddings = 32768;
  spec.rms_norm_eps = 1e-6;
  spec.vocab = 512;
  spec.tokenizer_vocab = 500;
  spec.bos_id = 1;
  spec.eos_ids = {2};
  spec.extra_config = {{"use_sliding_window", "false"},
                       {"sliding_window", std::to_string(sliding_window)},
                       {"max_window_layers", std::to_string(max_window_layers)}};
  return spec;
}

// Mistral v0.3 and Nemo: theta 1e6, "sliding_window": null.
RandomModelSpec mistral(std::int64_t positions) {
  RandomModelSpec spec = base("mistral");
  spec.rope_theta = 1e6;
  spec.max_position_embeddings = positions;
  spec.bos_id = 1;
  spec.eos_ids = {2};
  spec.extra_config = {{"sliding_window", "null"}};
  return spec;
}

}  // namespace

std::span<const std::string_view> preset_names() {
  return kNames;
}

RandomModelSpec preset_spec(std::string_view name) {
  RandomModelSpec spec;
  if (name == "llama-3.1-8b-instruct") {
    // 4096 hidden, 32 / 8 heads of 128, MLP 14336 (3.5 x): untied.
    spec = llama3(8.0);
    spec.hidden = 256;
    spec.heads = 8;
    spec.kv_heads = 2;
    spec.intermediate = 896;
    spec.tie_embeddings = false;
  } else if (name == "llama-3.2-3b-instruct") {
    // 3072 hidden, 24 / 8 heads, head_dim 128 written out, MLP 8192: tied.
    spec = llama3(32.0);
    spec.hidden = 192;
    spec.heads = 6;
    spec.kv_heads = 2;
    spec.head_dim = 32;
    spec.intermediate = 512;
    spec.tie_embeddings = true;
  } else if (name == "qwen2.5-7b-instruct") {
    // 3584 hidden, 28 / 4 heads of 128, MLP 18944: untied.
    spec = qwen25(131072, 28);
    spec.hidden = 224;
    spec.heads = 7;
    spec.kv_heads = 1;
    spec.intermediate = 1184;
    spec.tie_embeddings = false;
  } else if (name == "qwen2.5-1.5b-instruct") {
    // 1536 hidden, 12 / 2 heads of 128, MLP 8960: tied.
    spec = qwen25(32768, 21);
    spec.hidden = 192;
    spec.heads = 6;
    spec.kv_heads = 1;
    spec.intermediate = 1120;
    spec.tie_embeddings = true;
  } else if (name == "mistral-7b-instruct-v0.3") {
    // 4096 hidden, 32 / 8 heads of 128, MLP 14336: untied.
    spec = mistral(32768);
    spec.hidden = 256;
    spec.heads = 8;
    spec.kv_heads = 2;
    spec.intermediate = 896;
    spec.tie_embeddings = false;
  } else if (name == "mistral-nemo-instruct-2407") {
    // 5120 hidden, 32 / 8 heads of 128 (not 5120 / 32 = 160), MLP 14336: untied.
    spec = mistral(1024000);
    spec.hidden = 320;
    spec.heads = 8;
    spec.kv_heads = 2;
    spec.head_dim = 32;
    spec.intermediate = 896;
    spec.tie_embeddings = false;
  } else if (name == "gemma-2-9b-it") {
    // 3584 hidden, 16 / 8 heads of 256 (not 3584 / 16 = 224), MLP 14336 (4 x);
    // the attention scale from 224, hidden / heads, not from head_dim: tied.
    spec = base("gemma2");
    spec.hidden = 224;
    spec.heads = 4;
    spec.kv_heads = 2;
    spec.head_dim = 64;
    spec.intermediate = 896;
    spec.query_pre_attn_scalar = 56.0;
    spec.max_position_embeddings = 8192;
    spec.bos_id = 1;
    spec.eos_ids = {2};
  } else if (name == "gemma-3-4b-it") {
    // With its vision tower. 2560 hidden, 8 / 4 heads of 256, MLP 10240 (4 x),
    // a window of 1024 on five layers of six, linear scaling 8 on the others,
    // two EOS ids (end of text, end of turn): tied.
    spec = base("gemma3");
    spec.multimodal = true;
    spec.layers = 6;
    spec.hidden = 320;
    spec.heads = 4;
    spec.kv_heads = 2;
    spec.head_dim = 64;
    spec.intermediate = 1280;
    spec.sliding_window = 1024;
    spec.rope_scaling = {RopeScalingSpec::Type::Linear, 8.0};
    spec.max_position_embeddings = 131072;
    spec.bos_id = 1;
    spec.eos_ids = {2, kMinVocab - 1};
  } else if (name == "phi-3.5-mini-instruct") {
    // 3072 hidden, 32 heads of 96 without grouping, MLP 8192, longrope over
    // 4096 original positions to 131072: untied.
    spec = base("phi3");
    spec.hidden = 128;
    spec.heads = 4;
    spec.kv_heads = 4;
    spec.intermediate = 352;
    spec.rope_scaling = {RopeScalingSpec::Type::LongRope, 1.0, 4096};
    spec.max_position_embeddings = 131072;
    spec.tie_embeddings = false;
    spec.bos_id = 1;
    spec.eos_ids = {2};
  } else if (name == "phi-4-mini-instruct") {
    // 3072 hidden, 24 / 8 heads of 128 with RoPE on three quarters of each,
    // MLP 8192, longrope over 4096 original positions to 131072, a window
    // wider than that: tied.
    spec = base("phi3");
    spec.hidden = 192;
    spec.heads = 3;
    spec.kv_heads = 1;
    spec.intermediate = 512;
    spec.partial_rotary_factor = 0.75;
    spec.rope_scaling = {RopeScalingSpec::Type::LongRope, 1.0, 4096};
    spec.max_position_embeddings = 131072;
    spec.tie_embeddings = true;
    spec.bos_id = 1;
    spec.eos_ids = {2};
  } else if (name == "mixtral-8x7b-instruct-v0.1") {
    // 4096 hidden, 32 / 8 heads of 128, 8 experts of 14336 (3.5 x), two per
    // token, "sliding_window": null: untied. Four experts keep it small.
    spec = base("mixtral");
    spec.hidden = 256;
    spec.heads = 8;
    spec.kv_heads = 2;
    spec.intermediate = 896;
    spec.moe.experts = 4;
    spec.max_position_embeddings = 32768;
    spec.tie_embeddings = false;
    spec.bos_id = 1;
    spec.eos_ids = {2};
  } else if (name == "qwen3-30b-a3b") {
    // 2048 hidden, 32 / 4 heads of 128 (twice hidden / heads), 128 experts of
    // 768, eight per token, renormalised: untied. Sixteen experts keep it small.
    spec = base("qwen3_moe");
    spec.hidden = 256;
    spec.heads = 8;
    spec.kv_heads = 1;
    spec.head_dim = 64;
    spec.intermediate = 768;
    spec.moe.experts = 16;
    spec.moe.experts_per_token = 8;
    spec.moe.expert_intermediate = 96;
    spec.max_position_embeddings = 40960;
    spec.tie_embeddings = false;
    spec.bos_id = 1;
    spec.eos_ids = {2};
  } else {
    std::string names;
    for (const std::string_view known : kNames)
      names += (names.empty() ? "" : ", ") + std::string(known);
    throw std::invalid_argument("like: \"" + std::string(name) + "\" is not a known model; use " +
                                names);
  }
  return spec;
}

}  // namespace quire::engine::modelgen
