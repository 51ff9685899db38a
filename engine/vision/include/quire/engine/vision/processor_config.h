#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <variant>

#include "quire/engine/vision/normalization.h"
#include "quire/engine/vision/pil_resample.h"

namespace quire::vision {

// Gemma 3 (Gemma3ImageProcessor): a fixed size, optionally pan and scan.
struct Gemma3Options {
  int height = 896;
  int width = 896;
  bool do_pan_and_scan = false;
  int pan_and_scan_min_crop_size = 256;
  int pan_and_scan_max_num_crops = 4;
  double pan_and_scan_min_ratio_to_activate = 1.2;
  // Soft tokens per image (processor_config.json's image_seq_length, the
  // model's mm_tokens_per_image).
  int image_seq_length = 256;
  std::string boi_token = "<start_of_image>";
  std::string image_token = "<image_soft_token>";
  std::string eoi_token = "<end_of_image>";
};

// Qwen2-VL, Qwen2.5-VL and Qwen3-VL (Qwen2VLImageProcessor): smart_resize
// within a pixel budget, patches of patch_size merged merge_size by
// merge_size, each patch repeated temporal_patch_size times in time.
struct Qwen2VLOptions {
  std::int64_t min_pixels = 56 * 56;
  std::int64_t max_pixels = 28 * 28 * 1280;
  int patch_size = 14;
  int temporal_patch_size = 2;
  int merge_size = 2;
  std::string vision_start_token = "<|vision_start|>";
  std::string image_token = "<|image_pad|>";
  std::string vision_end_token = "<|vision_end|>";
};

// Pixtral and Mistral Small 3.x (PixtralImageProcessor): the longest edge
// fitted within a limit, both sides rounded up to whole patches.
struct PixtralOptions {
  int max_height = 1024;
  int max_width = 1024;
  // The vision tower's patch (processor_config.json's patch_size) times its
  // spatial merge: the unit both sides are rounded to, and one [IMG] token.
  int patch_height = 16;
  int patch_width = 16;
  std::string image_token = "[IMG]";
  std::string image_break_token = "[IMG_BREAK]";
  std::string image_end_token = "[IMG_END]";
};

struct ProcessorConfig {
  std::string image_processor_type;
  bool do_resize = true;
  ResampleFilter resample = ResampleFilter::Bicubic;
  Normalization normalization;
  std::variant<Gemma3Options, Qwen2VLOptions, PixtralOptions> family;
};

// Reads <model_dir>/preprocessor_config.json and, where the family has one,
// processor_config.json. Throws quire::engine::ModelError naming the file and
// the problem when the file is missing, is not JSON, names a processor Quire
// does not implement, or holds a value out of range.
ProcessorConfig read_processor_config(const std::filesystem::path& model_dir);

// The same from the files' text; `processor_json` may be empty (no
// processor_config.json). `source` names the directory in messages.
ProcessorConfig parse_processor_config(std::string_view preprocessor_json,
                                       std::string_view processor_json, const std::string& source);

}  // namespace quire::vision
