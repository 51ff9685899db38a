#pragma once

// What config.json says about Qwen2.5-VL's vision tower
// (Qwen2_5_VLForConditionalGeneration's "vision_config", with
// Qwen2_5_VLVisionConfig's defaults for the keys it leaves out) and the
// width of the language model its patch merger feeds.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "quire/engine/vision/gemma3_vision_config.h"

namespace quire::engine::vision {

// The tower's MLP activation (vision_config.hidden_act): "silu" in every
// published Qwen2.5-VL, or one of the GELUs.
enum class QwenVisionActivation { Silu, GeluTanh, GeluErf };

struct Qwen25VisionConfig {
  int depth = 32;
  int hidden_size = 3584;
  int intermediate_size = 3420;
  int num_heads = 16;
  int in_channels = 3;
  int patch_size = 14;
  int spatial_merge_size = 2;
  int temporal_patch_size = 2;
  int window_size = 112;  // pixels on a side of an attention window
  int out_hidden_size = 3584;
  // Blocks that attend over the whole image; the others attend inside windows.
  std::vector<int> fullatt_block_indexes{7, 15, 23, 31};
  QwenVisionActivation activation = QwenVisionActivation::Silu;
  std::string activation_name = "silu";

  int head_dim() const { return hidden_size / num_heads; }
  // Inputs of the patch embedding: one patch of every channel and time step.
  int patch_values() const { return in_channels * temporal_patch_size * patch_size * patch_size; }
  int merge_unit() const { return spatial_merge_size * spatial_merge_size; }
  // An attention window's side in merged tokens (transformers' vit_merger_window_size).
  int window_tokens() const { return window_size / spatial_merge_size / patch_size; }
  bool full_attention(int block) const;
};

// The vision side of a config.json's text; nothing when the model is not
// Qwen2_5_VLForConditionalGeneration. Throws ModelError naming `source` and
// the key for a value of the wrong type or out of range, a width the heads
// do not divide into a multiple of 4 (the 2D rotary embedding needs it), a
// window smaller than one merged token, a full-attention
// block beyond depth, an activation Quire does not run, or an
// out_hidden_size that is not the language model's hidden_size.
std::optional<Qwen25VisionConfig> parse_qwen25_vision_config(std::string_view json,
                                                             const std::string& source);

// The same, read from `directory`/config.json.
std::optional<Qwen25VisionConfig> read_qwen25_vision_config(const std::filesystem::path& directory);

}  // namespace quire::engine::vision
