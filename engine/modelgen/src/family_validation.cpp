#include "family_validation.h"

#include <cmath>
#include <set>
#include <string>

#include "mistral3_files.h"
#include "spec_text.h"

namespace quire::engine::modelgen::detail {
namespace {

bool gemma(const RandomModelSpec& spec) {
  return spec.architecture == "gemma2" || spec.architecture == "gemma3";
}

bool mixture_of_experts(const RandomModelSpec& spec) {
  return spec.architecture == "mixtral" || spec.architecture == "qwen3_moe";
}

// A setting that only some families read must keep its default elsewhere,
// or the directory would not say what the caller asked for.
void only_for(bool applies, std::string_view option, const std::string& families) {
  if (!applies) reject(option, "applies to " + families + " only");
}

void validate_gemma(const RandomModelSpec& spec) {
  const bool is_gemma = gemma(spec);
  if (spec.softcap.attention != 0.0 || spec.softcap.final != 0.0) {
    only_for(is_gemma, "softcap", "gemma2 and gemma3");
  }
  if (!(std::isfinite(spec.softcap.attention) && spec.softcap.attention >= 0.0 &&
        std::isfinite(spec.softcap.final) && spec.softcap.final >= 0.0)) {
    reject("softcap", "the caps must be positive, or 0 for none");
  }
  if (spec.query_pre_attn_scalar != 0.0) {
    only_for(is_gemma, "query_pre_attn_scalar", "gemma2 and gemma3");
    if (!(std::isfinite(spec.query_pre_attn_scalar) && spec.query_pre_attn_scalar > 0.0)) {
      reject("query_pre_attn_scalar", decimal(spec.query_pre_attn_scalar) + " must be positive");
    }
  }
  if (spec.sliding_window_pattern != 0) {
    only_for(spec.architecture == "gemma3", "sliding_window_pattern",
             "gemma3 (Gemma 2 alternates, 2)");
    check_range("sliding_window_pattern", spec.sliding_window_pattern, 1, 64);
  }
  if (spec.write_layer_types) only_for(is_gemma, "layer_types", "gemma2 and gemma3");
  if (!is_gemma) return;
  if (!spec.sliding_window) {
    reject("sliding_window", spec.architecture + " slides on some layers and needs a window");
  }
  if (!(std::isfinite(spec.rope_local_theta) && spec.rope_local_theta > 1.0 &&
        spec.rope_local_theta <= 1e9)) {
    reject("rope_local_theta", decimal(spec.rope_local_theta) + " must be above 1 and at most 1e9");
  }
  using Type = RopeScalingSpec::Type;
  const Type scaling = spec.rope_scaling.type;
  if (spec.architecture == "gemma2" && scaling != Type::None) {
    reject("rope_scaling", "gemma2 has no rotary scaling");
  }
  if (spec.architecture == "gemma3" && scaling != Type::None && scaling != Type::Linear) {
    reject("rope_scaling", "gemma3 scales its full-attention layers linearly only (linear:F)");
  }
}

void validate_qwen_vision(const RandomModelSpec& spec) {
  if (!spec.multimodal) reject("multimodal", "qwen2_5_vl always has its vision tower");
  if (spec.text_prefix != "model." && spec.text_prefix != "model.language_model.") {
    reject("text_prefix", "\"" + spec.text_prefix +
                              "\" is not model. (as published) or model.language_model. (as "
                              "transformers 4.52 and later save)");
  }
  const VisionSpec& vision = spec.vision;
  check_range("vision_hidden", vision.hidden, 8, 4096);
  check_range("vision_heads", vision.heads, 1, vision.hidden);
  if (vision.hidden % vision.heads != 0 || (vision.hidden / vision.heads) % 4 != 0) {
    reject("vision_heads", std::to_string(vision.heads) + " must divide the vision width (" +
                               std::to_string(vision.hidden) +
                               ") into heads of a multiple of 4 (the 2D rotary embedding)");
  }
  check_range("vision_intermediate", vision.intermediate, 8, 16384);
  check_range("vision_layers", vision.layers, 1, 32);
  check_range("patch_size", vision.patch_size, 1, 64);
  check_range("merge_size", vision.merge_size, 1, 8);
  check_range("temporal_patch_size", vision.temporal_patch_size, 1, 8);
  check_range("window_size", vision.window_size, vision.patch_size * vision.merge_size, 4096);
  for (const int block : vision.fullatt_blocks)
    check_range("fullatt_blocks", block, 0, vision.layers - 1);
}

void validate_vision(const RandomModelSpec& spec) {
  if (spec.architecture == "qwen2_5_vl") return validate_qwen_vision(spec);
  if (!spec.multimodal) return;
  only_for(spec.architecture == "gemma3" || spec.architecture == "mistral", "multimodal",
           "gemma3, mistral and qwen2_5_vl");
  if (spec.text_prefix != "language_model.model." && spec.text_prefix != "model.language_model.") {
    reject("text_prefix", "\"" + spec.text_prefix +
                              "\" is not language_model.model. (as published) or "
                              "model.language_model. (as transformers 4.52 and later save)");
  }
  if (is_mistral3(spec)) {
    validate_mistral3_vision(spec);
    return;
  }
  const VisionSpec& vision = spec.vision;
  check_range("vision_hidden", vision.hidden, 8, 4096);
  check_range("vision_heads", vision.heads, 1, vision.hidden);
  if (vision.hidden % vision.heads != 0) {
    reject("vision_heads", std::to_string(vision.heads) + " does not divide the vision width (" +
                               std::to_string(vision.hidden) + ")");
  }
  check_range("vision_intermediate", vision.intermediate, 8, 16384);
  check_range("vision_layers", vision.layers, 1, 32);
  check_range("patch_size", vision.patch_size, 1, 64);
  check_range("image_size", vision.image_size, vision.patch_size, 4096);
  if (vision.image_size % vision.patch_size != 0) {
    reject("image_size", std::to_string(vision.image_size) + " is not a multiple of the patch (" +
                             std::to_string(vision.patch_size) + ")");
  }
  // The projector average-pools a side of patches into a side of tokens.
  const int patches_per_side = vision.image_size / vision.patch_size;
  const int tokens_per_side =
      static_cast<int>(std::lround(std::sqrt(static_cast<double>(vision.tokens_per_image))));
  if (vision.tokens_per_image < 1 || tokens_per_side * tokens_per_side != vision.tokens_per_image ||
      patches_per_side % tokens_per_side != 0) {
    reject("tokens_per_image", std::to_string(vision.tokens_per_image) +
                                   " must be a square whose side divides the " +
                                   std::to_string(patches_per_side) + " patches of a side");
  }
}

void validate_phi3(const RandomModelSpec& spec) {
  using Type = RopeScalingSpec::Type;
  const bool phi3 = spec.architecture == "phi3";
  if (spec.partial_rotary_factor != 1.0) {
    only_for(phi3, "partial_rotary_factor", "phi3");
    if (!(spec.partial_rotary_factor > 0.0 && spec.partial_rotary_factor < 1.0)) {
      reject("partial_rotary_factor",
             decimal(spec.partial_rotary_factor) + " must lie above 0 and at most 1");
    }
    const double rotary = spec.resolved_head_dim() * spec.partial_rotary_factor;
    if (rotary != std::floor(rotary) || static_cast<int>(rotary) % 2 != 0 || rotary < 2.0) {
      reject("partial_rotary_factor", decimal(spec.partial_rotary_factor) + " of head_dim " +
                                          std::to_string(spec.resolved_head_dim()) +
                                          " is not an even number of rotating dimensions");
    }
  }
  if (spec.rope_scaling.type == Type::LongRope) {
    only_for(phi3, "rope_scaling", "phi3 (longrope)");
    const std::int64_t original = spec.rope_scaling.original_max_position_embeddings != 0
                                      ? spec.rope_scaling.original_max_position_embeddings
                                      : kLongRopeOriginalContext;
    if (spec.max_position_embeddings <= original) {
      reject("max_position_embeddings", std::to_string(spec.max_position_embeddings) +
                                            " must exceed longrope's original context of " +
                                            std::to_string(original));
    }
  }
  if (!phi3) return;
  // Phi3Config has no head_dim: readers divide hidden by heads.
  if (spec.head_dim != 0 && spec.head_dim * spec.heads != spec.hidden) {
    reject("head_dim", "phi3 takes hidden / heads (" + std::to_string(spec.hidden / spec.heads) +
                           "); leave head_dim out");
  }
  if (spec.rope_scaling.type != Type::None && spec.rope_scaling.type != Type::LongRope) {
    reject("rope_scaling", "phi3 scales by longrope[:ORIGINAL] only");
  }
}

void validate_experts(const RandomModelSpec& spec) {
  const MoeSpec& moe = spec.moe;
  if (!mixture_of_experts(spec)) {
    if (moe.experts != MoeSpec{}.experts) only_for(false, "experts", "mixtral and qwen3_moe");
    if (moe.experts_per_token != MoeSpec{}.experts_per_token) {
      only_for(false, "experts_per_token", "mixtral and qwen3_moe");
    }
  }
  const bool qwen3_moe = spec.architecture == "qwen3_moe";
  if (moe.expert_intermediate != 0) only_for(qwen3_moe, "expert_intermediate", "qwen3_moe");
  if (!moe.mlp_only_layers.empty()) only_for(qwen3_moe, "mlp_only_layers", "qwen3_moe");
  if (moe.decoder_sparse_step != 1) only_for(qwen3_moe, "decoder_sparse_step", "qwen3_moe");
  if (!moe.norm_topk_prob) {
    only_for(qwen3_moe, "norm_topk_prob", "qwen3_moe (Mixtral always renormalises)");
  }
  if (!mixture_of_experts(spec)) return;
  check_range("experts", moe.experts, 1, 256);
  if (moe.experts_per_token < 1 || moe.experts_per_token > moe.experts) {
    reject("experts_per_token", std::to_string(moe.experts_per_token) + " is outside 1.." +
                                    std::to_string(moe.experts) + " (the number of experts)");
  }
  if (moe.expert_intermediate != 0)
    check_range("expert_intermediate", moe.expert_intermediate, 32, 32768);
  check_range("expert_intermediate", spec.resolved_expert_intermediate(), 16, 32768);
  check_range("decoder_sparse_step", moe.decoder_sparse_step, 1, spec.layers);
  std::set<int> seen;
  for (const int layer : moe.mlp_only_layers) {
    check_range("mlp_only_layers", layer, 0, spec.layers - 1);
    if (!seen.insert(layer).second) {
      reject("mlp_only_layers", "layer " + std::to_string(layer) + " is listed twice");
    }
  }
}

}  // namespace

void validate_family(const RandomModelSpec& spec) {
  validate_gemma(spec);
  validate_vision(spec);
  validate_phi3(spec);
  validate_experts(spec);
}

}  // namespace quire::engine::modelgen::detail
