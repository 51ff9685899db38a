#include "quire/engine/vision/processor_config.h"

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "quire/engine/model_error.h"

namespace quire::vision {

namespace {

using nlohmann::json;
using quire::engine::ModelError;

// Reads one configuration file's settings; every message names the file.
class Settings {
 public:
  Settings(const json& root, std::string file) : root_(root), file_(std::move(file)) {}

  const std::string& file() const { return file_; }
  bool has(const char* key) const { return root_.contains(key) && !root_[key].is_null(); }

  // A missing key or null (transformers' "use the default") gives `fallback`.
  bool boolean(const char* key, bool fallback) const {
    if (!has(key)) return fallback;
    if (!root_[key].is_boolean()) fail(key, "must be true or false");
    return root_[key].get<bool>();
  }

  std::int64_t integer(const char* key, std::int64_t fallback, std::int64_t low,
                       std::int64_t high) const {
    if (!has(key)) return fallback;
    return integer_value(root_[key], key, low, high);
  }

  double number(const char* key, double fallback) const {
    if (!has(key)) return fallback;
    const json& value = root_[key];
    if (!value.is_number() || !std::isfinite(value.get<double>())) fail(key, "must be a number");
    return value.get<double>();
  }

  std::string text(const char* key, const std::string& fallback) const {
    if (!has(key)) return fallback;
    if (!root_[key].is_string() || root_[key].get<std::string>().empty())
      fail(key, "must be a non-empty string");
    return root_[key].get<std::string>();
  }

  // A number for all three channels, or a list of three.
  std::array<double, 3> channels(const char* key, const std::array<double, 3>& fallback) const {
    if (!has(key)) return fallback;
    const json& value = root_[key];
    if (value.is_number()) {
      const double v = value.get<double>();
      return {v, v, v};
    }
    if (!value.is_array() || value.size() != 3)
      fail(key, "must be a number or a list of 3 numbers");
    std::array<double, 3> out{};
    for (std::size_t i = 0; i < 3; ++i) {
      if (!value[i].is_number() || !std::isfinite(value[i].get<double>()))
        fail(key, "must be a number or a list of 3 numbers");
      out[i] = value[i].get<double>();
    }
    return out;
  }

  // A member of an object-valued setting such as "size".
  std::int64_t member(const char* key, const char* name, std::int64_t fallback, std::int64_t low,
                      std::int64_t high) const {
    if (!has(key)) return fallback;
    const json& object = root_[key];
    if (!object.is_object()) fail(key, "must be an object");
    if (!object.contains(name) || object[name].is_null()) return fallback;
    return integer_value(object[name], (std::string(key) + "." + name).c_str(), low, high);
  }

  bool has_member(const char* key, const char* name) const {
    return has(key) && root_[key].is_object() && root_[key].contains(name) &&
           !root_[key][name].is_null();
  }

  [[noreturn]] void fail(const std::string& key, const std::string& problem) const {
    throw ModelError(file_ + ": \"" + key + "\" " + problem +
                     "; restore the file from the model's repository");
  }

 private:
  std::int64_t integer_value(const json& value, const char* key, std::int64_t low,
                             std::int64_t high) const {
    if (!value.is_number_integer() &&
        !(value.is_number_float() && std::floor(value.get<double>()) == value.get<double>()))
      fail(key, "must be a whole number");
    const double v = value.get<double>();
    if (v < static_cast<double>(low) || v > static_cast<double>(high))
      fail(key,
           "is " + value.dump() + ", outside " + std::to_string(low) + ".." + std::to_string(high));
    return static_cast<std::int64_t>(v);
  }

  const json& root_;
  std::string file_;
};

json parse_json(std::string_view text, const std::string& file) {
  try {
    json root = json::parse(text);
    if (!root.is_object())
      throw ModelError(file + " is not a JSON object; restore it from the model's repository");
    return root;
  } catch (const json::exception& error) {
    throw ModelError(file + " is not valid JSON (" + error.what() +
                     "); restore it from the model's repository");
  }
}

enum class Family { Gemma3, Qwen2VL, Pixtral };

std::string without_suffix(std::string name, const std::string& suffix) {
  if (name.size() > suffix.size() &&
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
    name.erase(name.size() - suffix.size());
  return name;
}

Family family_of(const Settings& settings, std::string& type) {
  type = settings.text("image_processor_type", "");
  const std::string base = without_suffix(type, "Fast");
  if (base == "Gemma3ImageProcessor") return Family::Gemma3;
  if (base == "Qwen2VLImageProcessor" || base == "Qwen2_5_VLImageProcessor") return Family::Qwen2VL;
  if (base == "PixtralImageProcessor") return Family::Pixtral;
  if (type.empty()) {
    const std::string processor = settings.text("processor_class", "");
    if (processor == "Gemma3Processor") return Family::Gemma3;
    if (processor == "Qwen2VLProcessor" || processor == "Qwen2_5_VLProcessor" ||
        processor == "Qwen3VLProcessor")
      return Family::Qwen2VL;
    if (processor == "PixtralProcessor") return Family::Pixtral;
  }
  throw ModelError(settings.file() + ": image processor \"" +
                   (type.empty() ? std::string("(none named)") : type) +
                   "\" is not supported; Quire prepares images for Gemma3ImageProcessor, "
                   "Qwen2VLImageProcessor (Qwen2-VL, Qwen2.5-VL, Qwen3-VL) and "
                   "PixtralImageProcessor (Pixtral, Mistral Small 3.x)");
}

constexpr std::int64_t kMaxSide = 16384;

Gemma3Options gemma3_options(const Settings& pre, const Settings* processor) {
  Gemma3Options o;
  o.height = static_cast<int>(pre.member("size", "height", o.height, 1, kMaxSide));
  o.width = static_cast<int>(pre.member("size", "width", o.width, 1, kMaxSide));
  o.do_pan_and_scan = pre.boolean("do_pan_and_scan", o.do_pan_and_scan);
  o.pan_and_scan_min_crop_size = static_cast<int>(
      pre.integer("pan_and_scan_min_crop_size", o.pan_and_scan_min_crop_size, 1, kMaxSide));
  o.pan_and_scan_max_num_crops = static_cast<int>(
      pre.integer("pan_and_scan_max_num_crops", o.pan_and_scan_max_num_crops, 2, 64));
  o.pan_and_scan_min_ratio_to_activate =
      pre.number("pan_and_scan_min_ratio_to_activate", o.pan_and_scan_min_ratio_to_activate);
  o.image_seq_length =
      static_cast<int>(pre.integer("image_seq_length", o.image_seq_length, 1, 65536));
  if (processor)
    o.image_seq_length =
        static_cast<int>(processor->integer("image_seq_length", o.image_seq_length, 1, 65536));
  return o;
}

Qwen2VLOptions qwen2vl_options(const Settings& pre) {
  Qwen2VLOptions o;
  constexpr std::int64_t kMaxPixels = std::int64_t{1} << 32;
  // Newer configs spell the pixel budget as size.shortest_edge and
  // size.longest_edge; min_pixels and max_pixels, where present, win (as in
  // transformers).
  o.min_pixels = pre.member("size", "shortest_edge", o.min_pixels, 1, kMaxPixels);
  o.max_pixels = pre.member("size", "longest_edge", o.max_pixels, 1, kMaxPixels);
  o.min_pixels = pre.integer("min_pixels", o.min_pixels, 1, kMaxPixels);
  o.max_pixels = pre.integer("max_pixels", o.max_pixels, 1, kMaxPixels);
  if (o.min_pixels > o.max_pixels)
    pre.fail("min_pixels", "is above max_pixels (" + std::to_string(o.min_pixels) + " > " +
                               std::to_string(o.max_pixels) + ")");
  o.patch_size = static_cast<int>(pre.integer("patch_size", o.patch_size, 1, 1024));
  o.temporal_patch_size =
      static_cast<int>(pre.integer("temporal_patch_size", o.temporal_patch_size, 1, 16));
  o.merge_size = static_cast<int>(pre.integer("merge_size", o.merge_size, 1, 16));
  return o;
}

PixtralOptions pixtral_options(const Settings& pre, const Settings* processor) {
  PixtralOptions o;
  if (pre.has_member("size", "longest_edge")) {
    o.max_height = o.max_width =
        static_cast<int>(pre.member("size", "longest_edge", 1024, 1, kMaxSide));
  } else {
    o.max_height = static_cast<int>(pre.member("size", "height", o.max_height, 1, kMaxSide));
    o.max_width = static_cast<int>(pre.member("size", "width", o.max_width, 1, kMaxSide));
  }
  if (pre.has("patch_size") && !pre.has_member("patch_size", "height")) {
    o.patch_height = o.patch_width = static_cast<int>(pre.integer("patch_size", 16, 1, 1024));
  } else {
    o.patch_height = static_cast<int>(pre.member("patch_size", "height", o.patch_height, 1, 1024));
    o.patch_width = static_cast<int>(pre.member("patch_size", "width", o.patch_width, 1, 1024));
  }
  if (processor) {
    // PixtralProcessor hands its image processor patch_size times
    // spatial_merge_size (16 and 1 unless processor_config.json says
    // otherwise): the unit the image is rounded to, one [IMG] each.
    const auto patch = processor->integer("patch_size", 16, 1, 1024);
    const auto merge = processor->integer("spatial_merge_size", 1, 1, 16);
    o.patch_height = o.patch_width = static_cast<int>(patch * merge);
    o.image_token = processor->text("image_token", o.image_token);
    o.image_break_token = processor->text("image_break_token", o.image_break_token);
    o.image_end_token = processor->text("image_end_token", o.image_end_token);
  }
  return o;
}

}  // namespace

ProcessorConfig parse_processor_config(std::string_view preprocessor_json,
                                       std::string_view processor_json, const std::string& source) {
  const std::string pre_file = source + "/preprocessor_config.json";
  const std::string processor_file = source + "/processor_config.json";
  const json pre_root = parse_json(preprocessor_json, pre_file);
  const json processor_root =
      processor_json.empty() ? json::object() : parse_json(processor_json, processor_file);
  const Settings pre(pre_root, pre_file);
  const Settings processor_settings(processor_root, processor_file);
  const Settings* processor = processor_json.empty() ? nullptr : &processor_settings;

  ProcessorConfig config;
  const Family family = family_of(pre, config.image_processor_type);
  config.do_resize = pre.boolean("do_resize", true);
  if (!config.do_resize)
    pre.fail("do_resize",
             "is false; Quire prepares images only as the published configurations do, resized");
  const std::int64_t default_filter = family == Family::Gemma3 ? 2 : 3;
  const std::int64_t resample = pre.integer("resample", default_filter, 0, 5);
  try {
    config.resample = resample_filter_from_pil(static_cast<int>(resample));
  } catch (const ImageError& error) {
    pre.fail("resample", error.what());
  }
  Normalization& n = config.normalization;
  n.do_rescale = pre.boolean("do_rescale", true);
  n.rescale_factor = pre.number("rescale_factor", 1.0 / 255.0);
  n.do_normalize = pre.boolean("do_normalize", true);
  const std::array<double, 3> half{0.5, 0.5, 0.5};
  const std::array<double, 3> clip_mean{0.48145466, 0.4578275, 0.40821073};
  const std::array<double, 3> clip_std{0.26862954, 0.26130258, 0.27577711};
  const bool clip_defaults = family != Family::Gemma3;
  n.mean = pre.channels("image_mean", clip_defaults ? clip_mean : half);
  n.deviation = pre.channels("image_std", clip_defaults ? clip_std : half);
  for (double s : n.deviation)
    if (s == 0.0) pre.fail("image_std", "holds a zero, which normalization would divide by");

  switch (family) {
    case Family::Gemma3:
      config.family = gemma3_options(pre, processor);
      break;
    case Family::Qwen2VL:
      config.family = qwen2vl_options(pre);
      break;
    case Family::Pixtral:
      config.family = pixtral_options(pre, processor);
      break;
  }
  return config;
}

ProcessorConfig read_processor_config(const std::filesystem::path& model_dir) {
  const auto read = [](const std::filesystem::path& path, bool required) -> std::string {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      if (!required) return {};
      throw ModelError(path.string() +
                       " is missing: this model has no image preprocessing configuration, so it "
                       "cannot take images; download the model's preprocessor_config.json with it");
    }
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  };
  const std::string pre = read(model_dir / "preprocessor_config.json", true);
  const std::string processor = read(model_dir / "processor_config.json", false);
  return parse_processor_config(pre, processor, model_dir.string());
}

}  // namespace quire::vision
