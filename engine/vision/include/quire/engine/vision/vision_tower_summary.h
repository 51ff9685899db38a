#pragma once

// Whether a model directory can see images, and with which tower: what the
// model's description tells the application before anything is loaded.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "quire/engine/io/model_tensors.h"
#include "quire/kernels/dtype.h"

namespace quire::engine::vision {

struct VisionTowerSummary {
  std::string tower;      // "SigLIP", "Pixtral", "Qwen2.5-VL ViT"
  std::string projector;  // "Gemma 3", "Mistral 3", "patch merger"
  // Pixels on a side of the (square) input; 0 where images keep their own
  // size (Qwen2.5-VL: the processor resizes to whole merge blocks).
  int image_size = 0;
  // Images of any size up to image_size on a side (Pixtral), rather than
  // resized to image_size x image_size; tokens_per_image is then the most
  // an image takes, that of an image_size x image_size one.
  bool variable_size = false;
  int patch_size = 0;
  // Patches on a side of the square merged into one token (Qwen2.5-VL: 2);
  // 0 where tokens come otherwise (Gemma 3 pools to a fixed count).
  int merge_size = 0;
  int layers = 0;
  int hidden_size = 0;
  // Prompt positions one image takes; 0 where it depends on the image's
  // size (Qwen2.5-VL: one per merge block of the resized image).
  int tokens_per_image = 0;
  kernels::DType dtype = kernels::DType::BF16;
  std::int64_t parameters = 0;  // tower and projector
  std::int64_t bytes = 0;       // in the files
  // Host memory the tower takes once loaded (the linears' weights as stored,
  // the rest widened to FP32), and at its peak while it reads one image
  // (gemma3_image_scratch_bytes); the tower runs on the CPU.
  std::int64_t memory_bytes = 0;
  std::int64_t scratch_bytes = 0;
  std::string tensor_prefix;  // where the tower's tensors start
};

struct VisionAvailability {
  // Set when the files hold a complete tower that matches config.json.
  std::optional<VisionTowerSummary> tower;
  // Empty when the model has no vision side at all; otherwise, when `tower`
  // is unset, why the one config.json declares cannot be used (the checks'
  // ModelError message, naming the tensor or key).
  std::string problem;
};

// Reads `directory`/config.json and checks `tensors` (the directory's) without
// reading their data. Never throws for a broken vision side: the language
// model may still run, so the reason goes into `problem`.
VisionAvailability describe_vision(const std::filesystem::path& directory,
                                   const io::ModelTensors& tensors);

}  // namespace quire::engine::vision
