// write_calibrated_model (kv_calibration.h): a model directory with
// calibrated K/V scales, in llm-compressor's layout, beside the original.

#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <system_error>

#include "quire/engine/io/safetensors_writer.h"
#include "quire/engine/model_error.h"
#include "quire/engine/runtime/kv_calibration.h"
#include "quire/engine/runtime/model_description.h"

namespace quire::engine {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

constexpr const char* kScalesFile = "kv_cache_scales.safetensors";
constexpr const char* kRenamedSingleFile = "model-00001-of-00001.safetensors";

Json read_json(const fs::path& path) {
  std::ifstream file(path);
  if (!file) throw ModelError(path.string() + " cannot be read");
  try {
    return Json::parse(file);
  } catch (const Json::exception& error) {
    throw ModelError(path.string() + " is not valid JSON (" + error.what() + ")");
  }
}

void write_json(const fs::path& path, const Json& json) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file << json.dump(2) << '\n';
  file.close();
  if (!file) {
    throw std::system_error(std::make_error_code(std::errc::io_error),
                            "cannot write " + path.string());
  }
}

// A hard link where the file system allows one, a copy otherwise.
void link_or_copy(const fs::path& from, const fs::path& to) {
  std::error_code linked;
  fs::create_hard_link(from, to, linked);
  if (linked) fs::copy_file(from, to);
}

fs::path make_staging_directory(const fs::path& target) {
  std::random_device random;
  for (int attempt = 0; attempt < 16; ++attempt) {
    const fs::path staging = target.parent_path() / ("." + target.filename().string() +
                                                     ".partial-" + std::to_string(random()));
    if (fs::create_directory(staging)) return staging;
  }
  throw std::runtime_error("cannot create a staging directory next to " + target.string());
}

Json kv_cache_scheme(bool per_head) {
  return Json{
      {"num_bits", 8},    {"type", "float"},   {"strategy", per_head ? "attn_head" : "tensor"},
      {"dynamic", false}, {"symmetric", true}, {"observer", "minmax"}};
}

void write_scales(const ModelDescription& model, const CalibratedKvScales& scales,
                  const fs::path& path) {
  io::SafetensorsWriter writer;
  const std::int64_t heads = model.config.num_kv_heads;
  for (int layer = 0; layer < static_cast<int>(scales.layers.size()); ++layer) {
    const LayerKvScales& s = scales.layers[static_cast<std::size_t>(layer)];
    for (const bool key : {true, false}) {
      const std::vector<float>& values = key ? s.key : s.value;
      for (const float v : values) {
        if (!(v > 0.0f) || !std::isfinite(v)) {
          throw std::invalid_argument("layer " + std::to_string(layer) +
                                      ": a K/V scale must be positive and finite, not " +
                                      std::to_string(v));
        }
      }
      const std::size_t count = scales.per_head ? values.size() : 1;
      std::vector<std::byte> bytes(count * sizeof(float));
      std::memcpy(bytes.data(), values.data(), bytes.size());
      std::vector<std::int64_t> shape =
          scales.per_head ? std::vector<std::int64_t>{heads, 1, 1} : std::vector<std::int64_t>{1};
      writer.add(kv_scale_tensor_name(model, layer, key), kernels::DType::F32, std::move(shape),
                 std::move(bytes));
    }
  }
  writer.set_metadata("format", "pt");
  writer.write(path);
}

// The files of the original that hold scales already: only a scales file
// of Quire's own can be replaced; scales inside the model's shards would be
// loaded twice.
void check_no_scales_in_shards(const ModelDescription& model) {
  for (int layer = 0; layer < model.config.num_layers; ++layer) {
    for (const bool key : {true, false}) {
      for (const std::string& name : kv_scale_tensor_names(model, layer, key)) {
        const auto located = model.tensors.find(name);
        if (located && located->file->path().filename() != kScalesFile) {
          throw ModelError(model.directory.string() + " already holds calibrated K/V scales (" +
                           name + " in " + located->file->path().filename().string() +
                           "); calibrate the model they were made for, without them");
        }
      }
    }
  }
}

void write_directory(const ModelDescription& model, const CalibratedKvScales& scales,
                     const fs::path& staging) {
  const fs::path& source = model.directory;
  const bool single = fs::is_regular_file(source / io::ModelTensors::kSingleFileName);
  const bool indexed = !single && fs::is_regular_file(source / io::ModelTensors::kIndexFileName);
  for (const fs::directory_entry& entry : fs::directory_iterator(source)) {
    const std::string name = entry.path().filename().string();
    if (name == "config.json" || name == kScalesFile ||
        (indexed && name == io::ModelTensors::kIndexFileName)) {
      continue;
    }
    fs::path target = staging / name;
    if (single && name == io::ModelTensors::kSingleFileName) target = staging / kRenamedSingleFile;
    if (entry.is_directory()) {
      fs::copy(entry.path(), target, fs::copy_options::recursive);
    } else {
      link_or_copy(entry.path(), target);
    }
  }
  write_scales(model, scales, staging / kScalesFile);

  // Shards under an index are read by it alone: the scales' file joins it.
  if (single || indexed) {
    Json index = indexed ? read_json(source / io::ModelTensors::kIndexFileName)
                         : Json{{"metadata", Json::object()}, {"weight_map", Json::object()}};
    Json& map = index["weight_map"];
    if (single) {
      for (const std::string_view tensor : model.tensors.names())
        map[std::string(tensor)] = kRenamedSingleFile;
    }
    for (int layer = 0; layer < model.config.num_layers; ++layer) {
      for (const bool key : {true, false})
        map[kv_scale_tensor_name(model, layer, key)] = kScalesFile;
    }
    write_json(staging / io::ModelTensors::kIndexFileName, index);
  }

  Json config = read_json(source / "config.json");
  Json& quantization = config["quantization_config"];
  if (!quantization.is_object()) {
    quantization = Json{{"quant_method", "compressed-tensors"},
                        {"format", "dense"},
                        {"config_groups", Json::object()}};
  }
  quantization["kv_cache_scheme"] = kv_cache_scheme(scales.per_head);
  write_json(staging / "config.json", config);
}

}  // namespace

void write_calibrated_model(const ModelDescription& model, const CalibratedKvScales& scales,
                            const fs::path& out) {
  if (scales.layers.size() != static_cast<std::size_t>(model.config.num_layers)) {
    throw std::invalid_argument("K/V scales for " + std::to_string(scales.layers.size()) +
                                " layers, but the model has " +
                                std::to_string(model.config.num_layers));
  }
  check_no_scales_in_shards(model);
  const fs::path target = fs::absolute(out).lexically_normal();
  if (fs::exists(target) && !(fs::is_directory(target) && fs::is_empty(target))) {
    throw std::invalid_argument("out_dir " + out.string() +
                                " already exists and is not an empty directory");
  }
  fs::create_directories(target.parent_path());
  const fs::path staging = make_staging_directory(target);
  try {
    write_directory(model, scales, staging);
    // rename() replaces an empty directory; a directory another process
    // filled in the meantime makes it fail.
    fs::rename(staging, target);
  } catch (...) {
    std::error_code ignored;
    fs::remove_all(staging, ignored);
    throw;
  }
}

}  // namespace quire::engine
