#include "processor_files.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "mistral3_files.h"

namespace quire::engine::modelgen::detail {
namespace {

void write_json(const std::filesystem::path& path, const nlohmann::ordered_json& json) {
  std::ofstream out(path, std::ios::binary);
  out << json.dump(2) << '\n';
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

}  // namespace

void write_processor_files(const RandomModelSpec& spec, const std::filesystem::path& dir) {
  if (is_mistral3(spec)) {
    for (const auto& [name, text] : mistral3_processor_files(spec)) {
      std::ofstream out(dir / name, std::ios::binary);
      out << text;
      if (!out) throw std::runtime_error("cannot write " + (dir / name).string());
    }
    return;
  }
  if (!spec.multimodal || spec.architecture != "gemma3") return;
  const VisionSpec& vision = spec.vision;
  // gemma-3-4b-it's files, keys in their order, nulls where it has them.
  nlohmann::ordered_json preprocessor;
  preprocessor["do_convert_rgb"] = nullptr;
  preprocessor["do_normalize"] = true;
  preprocessor["do_pan_and_scan"] = nullptr;
  preprocessor["do_rescale"] = true;
  preprocessor["do_resize"] = true;
  preprocessor["image_mean"] = {0.5, 0.5, 0.5};
  preprocessor["image_processor_type"] = "Gemma3ImageProcessor";
  preprocessor["image_seq_length"] = vision.tokens_per_image;
  preprocessor["image_std"] = {0.5, 0.5, 0.5};
  preprocessor["pan_and_scan_max_num_crops"] = nullptr;
  preprocessor["pan_and_scan_min_crop_size"] = nullptr;
  preprocessor["pan_and_scan_min_ratio_to_activate"] = nullptr;
  preprocessor["processor_class"] = "Gemma3Processor";
  preprocessor["resample"] = 2;
  preprocessor["rescale_factor"] = 0.00392156862745098;
  preprocessor["size"] = {{"height", vision.image_size}, {"width", vision.image_size}};
  write_json(dir / "preprocessor_config.json", preprocessor);
  nlohmann::ordered_json processor;
  processor["image_seq_length"] = vision.tokens_per_image;
  processor["processor_class"] = "Gemma3Processor";
  write_json(dir / "processor_config.json", processor);
}

}  // namespace quire::engine::modelgen::detail
