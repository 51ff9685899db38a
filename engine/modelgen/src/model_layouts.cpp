// The tensors of each family, named and shaped as in the published
// safetensors: Llama-style q/k/v/o and gate/up/down, Qwen3's and Gemma 3's
// per-head norms, Gemma's four norms per layer, Phi-3's fused projections,
// Mixtral's and Qwen3-MoE's routers and experts, Gemma 3's and Qwen2.5-VL's
// vision towers.

#include <cmath>
#include <string>

#include "mistral3_files.h"
#include "tensor_builder.h"

namespace quire::engine::modelgen::detail {
namespace {

// Where the tensors live. Text weights keep the label of their text-only
// twin ("model.layers.0...") whatever prefix they are saved under.
struct Names {
  std::string text = "model.";
  std::string head = "lm_head";
  std::string vision;     // Gemma 3's SigLIP tower, Mistral 3's Pixtral, Qwen2.5-VL's ViT
  std::string projector;  // and its projection into the text model
};

Names names_of(const RandomModelSpec& spec) {
  Names names;
  if (!spec.multimodal) return names;
  names.text = spec.text_prefix;
  if (spec.architecture == "qwen2_5_vl") {
    // Qwen/Qwen2.5-VL-*-Instruct publish "model." and "visual."; transformers
    // >= 4.52 saves "model.language_model." and "model.visual.". The head
    // stays "lm_head" in both.
    names.vision = spec.text_prefix == "model." ? "visual." : "model.visual.";
    names.projector = names.vision + "merger.";
    return names;
  }
  // Pixtral's tensors sit right under vision_tower., SigLIP's under vision_model.
  const std::string tower = is_mistral3(spec) ? "vision_tower." : "vision_tower.vision_model.";
  if (spec.text_prefix == "model.language_model.") {
    // transformers >= 4.52 saves the conditional-generation model this way.
    names.vision = "model." + tower;
    names.projector = "model.multi_modal_projector.";
  } else {
    // As google/gemma-3-4b-it publishes it.
    names.head = "language_model.lm_head";
    names.vision = tower;
    names.projector = "multi_modal_projector.";
  }
  return names;
}

bool is_gemma(const RandomModelSpec& spec) {
  return spec.architecture == "gemma2" || spec.architecture == "gemma3";
}

double inverse_sqrt(std::int64_t n) {
  return 1.0 / std::sqrt(static_cast<double>(n));
}

class LayoutPlanner {
 public:
  explicit LayoutPlanner(TensorBuilder& builder)
      : b_(builder), spec_(builder.spec()), names_(names_of(spec_)) {}

  void plan() {
    const std::int64_t hidden = spec_.hidden;
    // Gemma multiplies its embeddings by sqrt(hidden): drawn this much
    // smaller, the decoder's input stays of order one, and so do the logits
    // of the tied head.
    const double embedding_deviation = is_gemma(spec_) ? inverse_sqrt(hidden) : 1.0;
    text_dense("embed_tokens.weight", {spec_.vocab, hidden}, 0.0, embedding_deviation);
    for (int i = 0; i < spec_.layers; ++i)
      layer(i);
    norm("norm.weight", hidden);
    // exllamav3 quantizes the head of a tied model too, under lm_head.
    const bool exl3_head = spec_.format.kind == WeightFormat::EXL3 && spec_.exl3_head_bits != 16;
    if (!spec_.resolved_tie() || exl3_head) b_.head(names_.head, hidden, spec_.vocab, "lm_head");
    if (is_mistral3(spec_)) {
      plan_mistral3_vision(b_, names_.vision, names_.projector);
    } else if (spec_.multimodal && spec_.architecture == "qwen2_5_vl") {
      qwen_vision_tower();
    } else if (spec_.multimodal) {
      vision_tower();
    }
  }

 private:
  void text_dense(const std::string& rest, std::vector<std::int64_t> shape, double mean,
                  double deviation) {
    b_.dense(names_.text + rest, std::move(shape), mean, deviation, "model." + rest);
  }

  void text_linear(const std::string& rest, std::int64_t in, std::int64_t out,
                   Bias bias = Bias::None) {
    b_.linear(names_.text + rest, in, out, bias, "model." + rest);
  }

  // Gemma's RMSNorm scales by (1 + w): its weights lie around 0, the others' around 1.
  void norm(const std::string& rest, std::int64_t size) {
    text_dense(rest, {size}, is_gemma(spec_) ? 0.0 : 1.0, 0.1);
  }

  void layer(int i) {
    const std::string prefix = "layers." + std::to_string(i) + ".";
    const std::int64_t hidden = spec_.hidden;
    norm(prefix + "input_layernorm.weight", hidden);
    attention(prefix);
    norm(prefix + "post_attention_layernorm.weight", hidden);
    if (is_gemma(spec_)) norm(prefix + "pre_feedforward_layernorm.weight", hidden);
    mlp(prefix, i);
    if (is_gemma(spec_)) norm(prefix + "post_feedforward_layernorm.weight", hidden);
  }

  void attention(const std::string& prefix) {
    const std::int64_t hidden = spec_.hidden;
    const std::int64_t head_dim = spec_.resolved_head_dim();
    const std::int64_t q_out = std::int64_t{spec_.heads} * head_dim;
    const std::int64_t kv_out = std::int64_t{spec_.kv_heads} * head_dim;
    if (spec_.architecture == "phi3") {
      // One projection whose rows are q, then k, then v.
      text_linear(prefix + "self_attn.qkv_proj", hidden, q_out + 2 * kv_out);
      text_linear(prefix + "self_attn.o_proj", q_out, hidden);
      return;
    }
    const bool qwen2_layers = spec_.architecture == "qwen2" || spec_.architecture == "qwen2_5_vl";
    const Bias qkv_bias = qwen2_layers ? Bias::Random : Bias::None;
    text_linear(prefix + "self_attn.q_proj", hidden, q_out, qkv_bias);
    text_linear(prefix + "self_attn.k_proj", hidden, kv_out, qkv_bias);
    text_linear(prefix + "self_attn.v_proj", hidden, kv_out, qkv_bias);
    text_linear(prefix + "self_attn.o_proj", q_out, hidden);
    if (spec_.architecture == "qwen3" || spec_.architecture == "qwen3_moe" ||
        spec_.architecture == "gemma3") {
      // One weight of head_dim per projection, shared by its heads.
      norm(prefix + "self_attn.q_norm.weight", head_dim);
      norm(prefix + "self_attn.k_norm.weight", head_dim);
    }
  }

  bool sparse_layer(int i) const {
    if (spec_.architecture == "mixtral") return true;
    if (spec_.architecture != "qwen3_moe") return false;
    for (const int dense : spec_.moe.mlp_only_layers) {
      if (dense == i) return false;
    }
    return (i + 1) % spec_.moe.decoder_sparse_step == 0;
  }

  void mlp(const std::string& prefix, int i) {
    const std::int64_t hidden = spec_.hidden;
    const std::int64_t inner = spec_.intermediate;
    if (spec_.architecture == "phi3") {
      // One projection whose first half of rows is the gate, the second the up projection.
      text_linear(prefix + "mlp.gate_up_proj", hidden, 2 * inner);
      text_linear(prefix + "mlp.down_proj", inner, hidden);
      return;
    }
    if (!sparse_layer(i)) {
      text_linear(prefix + "mlp.gate_proj", hidden, inner);
      text_linear(prefix + "mlp.up_proj", hidden, inner);
      text_linear(prefix + "mlp.down_proj", inner, hidden);
      return;
    }
    // The router stays dense in every format: converters leave it unquantized.
    const std::int64_t experts = spec_.moe.experts;
    if (spec_.architecture == "mixtral") {
      text_dense(prefix + "block_sparse_moe.gate.weight", {experts, hidden}, 0.0,
                 inverse_sqrt(hidden));
      for (int e = 0; e < spec_.moe.experts; ++e) {
        const std::string expert = prefix + "block_sparse_moe.experts." + std::to_string(e) + ".";
        text_linear(expert + "w1", hidden, inner);  // gate
        text_linear(expert + "w2", inner, hidden);  // down
        text_linear(expert + "w3", hidden, inner);  // up
      }
      return;
    }
    const std::int64_t expert_inner = spec_.resolved_expert_intermediate();
    text_dense(prefix + "mlp.gate.weight", {experts, hidden}, 0.0, inverse_sqrt(hidden));
    for (int e = 0; e < spec_.moe.experts; ++e) {
      const std::string expert = prefix + "mlp.experts." + std::to_string(e) + ".";
      text_linear(expert + "gate_proj", hidden, expert_inner);
      text_linear(expert + "up_proj", hidden, expert_inner);
      text_linear(expert + "down_proj", expert_inner, hidden);
    }
  }

  // SigLIP's LayerNorms (weight around 1, bias around 0) and dense linears
  // with biases; never quantized, as exllamav2 and GPTQ leave the tower alone.
  void vision_dense(const std::string& name, std::vector<std::int64_t> shape, double mean,
                    double deviation) {
    b_.dense(name, std::move(shape), mean, deviation);
  }

  void vision_linear(const std::string& key, std::int64_t in, std::int64_t out) {
    vision_dense(key + ".weight", {out, in}, 0.0, inverse_sqrt(in));
    vision_dense(key + ".bias", {out}, 0.0, 0.1);
  }

  void layer_norm(const std::string& key, std::int64_t size) {
    vision_dense(key + ".weight", {size}, 1.0, 0.1);
    vision_dense(key + ".bias", {size}, 0.0, 0.1);
  }

  void vision_tower() {
    const VisionSpec& vision = spec_.vision;
    const std::int64_t width = vision.hidden;
    const std::int64_t patch = vision.patch_size;
    const std::int64_t side = vision.image_size / vision.patch_size;
    const std::string& v = names_.vision;
    vision_dense(v + "embeddings.patch_embedding.weight", {width, 3, patch, patch}, 0.0,
                 inverse_sqrt(3 * patch * patch));
    vision_dense(v + "embeddings.patch_embedding.bias", {width}, 0.0, 0.1);
    vision_dense(v + "embeddings.position_embedding.weight", {side * side, width}, 0.0, 1.0);
    for (int i = 0; i < vision.layers; ++i) {
      const std::string prefix = v + "encoder.layers." + std::to_string(i) + ".";
      layer_norm(prefix + "layer_norm1", width);
      for (const char* projection : {"q_proj", "k_proj", "v_proj", "out_proj"})
        vision_linear(prefix + "self_attn." + projection, width, width);
      layer_norm(prefix + "layer_norm2", width);
      vision_linear(prefix + "mlp.fc1", width, vision.intermediate);
      vision_linear(prefix + "mlp.fc2", vision.intermediate, width);
    }
    layer_norm(v + "post_layernorm", width);
    // The projector's own RMSNorm scales by (1 + w), as the text model's.
    vision_dense(names_.projector + "mm_input_projection_weight", {width, spec_.hidden}, 0.0,
                 inverse_sqrt(width));
    vision_dense(names_.projector + "mm_soft_emb_norm.weight", {width}, 0.0, 0.1);
  }

  // Qwen2.5-VL's ViT: the Conv3d patch embedding without bias, blocks of
  // RMSNorm (weights around 1), fused qkv, proj and a gated MLP, all with
  // biases, then the merger (ln_q, mlp.0, mlp.2) into the text width.
  void qwen_vision_tower() {
    const VisionSpec& vision = spec_.vision;
    const std::int64_t width = vision.hidden;
    const std::int64_t patch = vision.patch_size;
    const std::int64_t frames = vision.temporal_patch_size;
    const std::string& v = names_.vision;
    vision_dense(v + "patch_embed.proj.weight", {width, 3, frames, patch, patch}, 0.0,
                 inverse_sqrt(3 * frames * patch * patch));
    for (int i = 0; i < vision.layers; ++i) {
      const std::string block = v + "blocks." + std::to_string(i) + ".";
      vision_dense(block + "norm1.weight", {width}, 1.0, 0.1);
      vision_linear(block + "attn.qkv", width, 3 * width);
      vision_linear(block + "attn.proj", width, width);
      vision_dense(block + "norm2.weight", {width}, 1.0, 0.1);
      vision_linear(block + "mlp.gate_proj", width, vision.intermediate);
      vision_linear(block + "mlp.up_proj", width, vision.intermediate);
      vision_linear(block + "mlp.down_proj", vision.intermediate, width);
    }
    const std::int64_t merged = width * vision.merge_size * vision.merge_size;
    vision_dense(names_.projector + "ln_q.weight", {width}, 1.0, 0.1);
    vision_linear(names_.projector + "mlp.0", merged, merged);
    vision_linear(names_.projector + "mlp.2", merged, spec_.hidden);
  }

  TensorBuilder& b_;
  const RandomModelSpec& spec_;
  Names names_;
};

}  // namespace

void plan_model(TensorBuilder& builder) {
  LayoutPlanner(builder).plan();
}

}  // namespace quire::engine::modelgen::detail
