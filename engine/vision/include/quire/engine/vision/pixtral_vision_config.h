#pragma once

// What config.json says about Mistral Small 3.x's image side
// (Mistral3ForConditionalGeneration): the Pixtral encoder ("vision_config",
// with PixtralVisionConfig's defaults for the keys it leaves out) and the
// Mistral 3 projector (RMSNorm, patch merger, two linears) into the language
// model.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "quire/engine/vision/gemma3_vision_config.h"

namespace quire::engine::vision {

// The gate's activation of Pixtral's gated MLP: act(gate(x)) * up(x).
enum class GateActivation { Silu, GeluErf, GeluTanh };

struct PixtralConfig {
  int hidden_size = 1024;
  int intermediate_size = 4096;
  int num_layers = 24;
  int num_heads = 16;
  int num_channels = 3;
  int image_size = 1024;  // the longest side an image may have, in pixels
  int patch_size = 16;
  double rope_theta = 10000.0;
  GateActivation activation = GateActivation::GeluErf;
  std::string activation_name = "gelu";

  // transformers takes head_dim as hidden_size / num_attention_heads.
  int head_dim() const { return hidden_size / num_heads; }
  // The largest patch grid's side: the rotary table's rows and columns.
  int max_patches_per_side() const { return image_size / patch_size; }
  int patch_values() const { return num_channels * patch_size * patch_size; }
};

// RMSNorm's epsilon inside the Pixtral encoder (ln_pre, attention_norm,
// ffn_norm): fixed at 1e-5 by transformers' PixtralVisionModel, not a key.
inline constexpr double kPixtralNormEps = 1e-5;

struct Mistral3VisionConfig {
  PixtralConfig tower;
  int spatial_merge_size = 2;  // patches merged into one token, per side
  Gelu projector_activation = Gelu::Erf;
  std::string projector_activation_name = "gelu";
  bool projector_bias = false;  // multimodal_projector_bias
  // Encoder layers whose output the projector takes: vision_feature_layer
  // resolved (-1, the published value, is every layer).
  int feature_layers = 24;
  int text_hidden_size = 5120;      // text_config.hidden_size
  double text_rms_norm_eps = 1e-5;  // text_config.rms_norm_eps: the projector norm's epsilon

  // Pixels on a side of the square of patches that becomes one token.
  int token_pixels() const { return tower.patch_size * spatial_merge_size; }
  // Tokens of an image of height x width pixels (multiples of token_pixels()).
  int tokens_for(int height, int width) const {
    return (height / token_pixels()) * (width / token_pixels());
  }
};

// The vision side of a config.json's text; nothing when the model is not
// Mistral3ForConditionalGeneration or has no "vision_config". Throws
// ModelError naming `source` and the key when a value is missing its type,
// out of range or inconsistent (a width the heads do not divide, a head_dim
// that disagrees, an image size the merged patches do not tile), or when the
// tower is not Pixtral, an activation is not one Quire runs, or
// vision_feature_layer is a list.
std::optional<Mistral3VisionConfig> parse_mistral3_vision_config(std::string_view json,
                                                                 const std::string& source);

// The same, read from `directory`/config.json.
std::optional<Mistral3VisionConfig> read_mistral3_vision_config(
    const std::filesystem::path& directory);

}  // namespace quire::engine::vision
