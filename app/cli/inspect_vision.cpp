#include "inspect_vision.h"

#include "cli_support.h"
#include "quire/engine/image_prompts/image_preparer.h"

namespace quire::cli {

nlohmann::ordered_json vision_json(const engine::vision::VisionAvailability& vision) {
  using Json = nlohmann::ordered_json;
  if (!vision.tower)
    return vision.problem.empty() ? Json(nullptr) : Json{{"problem", vision.problem}};
  const engine::vision::VisionTowerSummary& tower = *vision.tower;
  return Json{{"tower", tower.tower},
              {"projector", tower.projector},
              {"image_size", tower.image_size},
              {"variable_size", tower.variable_size},
              {"patch_size", tower.patch_size},
              {"merge_size", tower.merge_size},
              {"layers", tower.layers},
              {"hidden_size", tower.hidden_size},
              {"tokens_per_image", tower.tokens_per_image},
              {"dtype", std::string(kernels::dtype_name(tower.dtype))},
              {"parameters", tower.parameters},
              {"bytes", tower.bytes},
              // Host memory once loaded, and at the peak of reading one image:
              // the tower runs on the CPU (the plan's "vision_tower" prices them).
              {"memory_bytes", tower.memory_bytes},
              {"scratch_bytes", tower.scratch_bytes},
              {"tensor_prefix", tower.tensor_prefix},
              {"images_given_to_model", engine::ImagePreparer::takes_images_of(tower)}};
}

std::string vision_text(const engine::vision::VisionAvailability& vision) {
  if (!vision.tower) return vision.problem.empty() ? "" : "cannot be used: " + vision.problem;
  const engine::vision::VisionTowerSummary& tower = *vision.tower;
  const std::string patch = std::to_string(tower.patch_size);
  std::string images;
  if (tower.image_size == 0) {
    // Qwen2.5-VL: each image keeps its size, so its token count is its own.
    const std::string merge = std::to_string(tower.merge_size);
    images = "images at their own size in patches of " + patch + ", a token per " + merge + " x " +
             merge + " patches";
  } else {
    const std::string size = std::to_string(tower.image_size);
    // Pixtral takes each image at its own size, up to image_size on a side.
    images = (tower.variable_size ? "images up to " + size + " x " + size
                                  : size + " x " + size + " images") +
             " in patches of " + patch + ", " + (tower.variable_size ? "up to " : "") +
             std::to_string(tower.tokens_per_image) + " tokens per image";
  }
  std::string text = tower.tower + " tower, " + tower.projector + " projector: " + images + "; " +
                     std::to_string(tower.layers) + (tower.layers == 1 ? " layer" : " layers") +
                     " of width " + std::to_string(tower.hidden_size) + ", " +
                     std::string(kernels::dtype_name(tower.dtype)) + ", " +
                     std::to_string(tower.parameters) + " parameters, " + human_bytes(tower.bytes);
  // A tower whose family's images the engine does not yet place in a
  // prompt: say so, lest the tower promise more.
  if (!engine::ImagePreparer::takes_images_of(tower)) {
    text += " (images are not yet given to the model)";
  }
  return text;
}

}  // namespace quire::cli
