#pragma once

// What config.json says about Gemma 3's image side: the SigLIP encoder
// ("vision_config", with SiglipVisionConfig's defaults for the keys it leaves
// out) and the projector into the language model ("mm_tokens_per_image" and
// the text width).

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace quire::engine::vision {

// transformers' "gelu_pytorch_tanh" and "gelu_new" (the tanh approximation,
// which SigLIP uses), and "gelu" (the exact one, through erf).
enum class Gelu { Tanh, Erf };

struct SiglipConfig {
  int hidden_size = 768;
  int intermediate_size = 3072;
  int num_layers = 12;
  int num_heads = 12;
  int num_channels = 3;
  int image_size = 224;
  int patch_size = 16;
  double layer_norm_eps = 1e-6;
  Gelu activation = Gelu::Tanh;
  std::string activation_name = "gelu_pytorch_tanh";

  int head_dim() const { return hidden_size / num_heads; }
  int patches_per_side() const { return image_size / patch_size; }
  int patches() const { return patches_per_side() * patches_per_side(); }
  // Inputs of the patch embedding: one patch of every channel.
  int patch_values() const { return num_channels * patch_size * patch_size; }
};

struct Gemma3VisionConfig {
  SiglipConfig tower;
  int tokens_per_image = 256;   // mm_tokens_per_image
  int text_hidden_size = 2304;  // text_config.hidden_size: the projector's output width

  int tokens_per_side() const;
  // The side of the square of patches averaged into one token.
  int pool_kernel() const { return tower.patches_per_side() / tokens_per_side(); }
};

// The vision side of a config.json's text; nothing when the model is not
// Gemma3ForConditionalGeneration or has no "vision_config". Throws ModelError
// naming `source` and the key when a value is missing its type, out of range,
// or inconsistent (a width the heads do not divide, an image the patches do
// not tile, a token count that is not a square dividing the patch grid), or
// when the tower is not SigLIP or its activation is not one Quire runs.
std::optional<Gemma3VisionConfig> parse_gemma3_vision_config(std::string_view json,
                                                             const std::string& source);

// The same, read from `directory`/config.json.
std::optional<Gemma3VisionConfig> read_gemma3_vision_config(const std::filesystem::path& directory);

}  // namespace quire::engine::vision
