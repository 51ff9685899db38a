#include "quire/engine/io/model_tensors.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <system_error>

#include "io_errors.h"
#include "json_header.h"

namespace quire::engine::io {
namespace {

using detail::fail;
using detail::quote_text;
using nlohmann::json;

constexpr std::string_view kIndexAdvice =
    "the index is damaged or does not belong to these files — download the model again";
constexpr std::string_view kMismatchAdvice = "the model files do not match config.json";

bool regular_file_exists(const std::filesystem::path& path) {
  std::error_code error;
  return std::filesystem::is_regular_file(path, error);  // follows links, as model caches use them
}

// A shard name must stay inside the model directory: a hostile index could
// otherwise point the loader at "../../anything".
bool is_plain_file_name(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos &&
         name.find('\0') == std::string::npos;
}

// weight_map of the index: tensor name -> shard file name.
std::map<std::string, std::string> read_weight_map(const std::filesystem::path& index_path) {
  const MappedFile index = MappedFile::open(index_path);
  if (index.size() > SafetensorsFile::kMaxHeaderBytes) {
    fail(index_path, "the index is " + std::to_string(index.size()) + " bytes, larger than the " +
                         std::to_string(SafetensorsFile::kMaxHeaderBytes) + "-byte limit; " +
                         std::string(kIndexAdvice));
  }
  const std::string_view text(reinterpret_cast<const char*>(index.bytes().data()), index.size());
  const json root = detail::parse_untrusted_json(index_path, text, "the index", kIndexAdvice);
  const auto map = root.is_object() ? root.find("weight_map") : root.end();
  if (!root.is_object() || map == root.end() || !map->is_object()) {
    fail(index_path, "the index has no \"weight_map\" object naming each tensor's file; " +
                         std::string(kIndexAdvice));
  }
  std::map<std::string, std::string> weight_map;
  for (const auto& [tensor, file] : map->items()) {
    if (!file.is_string() || !is_plain_file_name(file.get<std::string>())) {
      fail(index_path,
           "the index places tensor " + quote_text(tensor) + " in " + detail::json_brief(file) +
               ", which is not a file name in the model directory; " + std::string(kIndexAdvice));
    }
    weight_map.emplace(tensor, file.get<std::string>());
  }
  return weight_map;
}

std::vector<std::filesystem::path> list_safetensors(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> found;
  std::error_code error;
  std::filesystem::directory_iterator it(dir, error);
  for (; !error && it != std::filesystem::directory_iterator(); it.increment(error)) {
    const std::filesystem::path& path = it->path();
    if (path.extension() == ".safetensors" && regular_file_exists(path)) found.push_back(path);
  }
  if (error) {
    fail(dir, "cannot list the model directory: " + error.message() +
                  "; check that it exists and that you may read it");
  }
  std::sort(found.begin(), found.end());
  return found;
}

}  // namespace

ModelTensors ModelTensors::open(const std::filesystem::path& dir) {
  std::error_code error;
  if (!std::filesystem::is_directory(dir, error)) {
    fail(dir,
         "is not a directory; choose the folder that holds the model's config.json and "
         "*.safetensors files");
  }
  ModelTensors model;
  model.dir_ = dir;

  const std::filesystem::path single = dir / kSingleFileName;
  const std::filesystem::path index_path = dir / kIndexFileName;
  if (regular_file_exists(single)) {
    model.add_file(SafetensorsFile::open(single));
  } else if (regular_file_exists(index_path)) {
    const std::map<std::string, std::string> weight_map = read_weight_map(index_path);
    std::map<std::string, std::vector<const std::string*>> by_file;  // file -> its tensors
    for (const auto& [tensor, file] : weight_map)
      by_file[file].push_back(&tensor);
    for (const auto& [file, tensors] : by_file) {
      const std::filesystem::path shard = dir / file;
      if (!regular_file_exists(shard)) {
        fail(index_path, "the index names " + quote_text(file) + " for " +
                             std::to_string(tensors.size()) + " tensors (such as " +
                             quote_text(*tensors.front()) +
                             "), but that file is missing from the model directory; the "
                             "download is incomplete — download the missing file");
      }
      SafetensorsFile opened = SafetensorsFile::open(shard);
      for (const std::string* tensor : tensors) {
        if (opened.find(*tensor) == nullptr) {
          fail(shard, "the index says this file holds tensor " + quote_text(*tensor) +
                          ", but it does not; " + std::string(kIndexAdvice));
        }
      }
      model.add_file(std::move(opened));
    }
  } else {
    for (const std::filesystem::path& path : list_safetensors(dir))
      model.add_file(SafetensorsFile::open(path));
  }
  if (model.files_.empty()) {
    fail(dir,
         "holds no safetensors files (model.safetensors, model.safetensors.index.json or "
         "*.safetensors); choose the folder with the model's weights, or finish its "
         "download");
  }
  return model;
}

void ModelTensors::add_file(SafetensorsFile file) {
  files_.push_back(std::move(file));
  const std::size_t file_index = files_.size() - 1;
  const SafetensorsFile& added = files_.back();
  for (std::size_t i = 0; i < added.tensors().size(); ++i) {
    const TensorInfo& info = added.tensors()[i];
    const auto [it, inserted] = index_.emplace(info.name, Slot{file_index, i});
    if (!inserted) {
      const SafetensorsFile& first = files_[it->second.file];
      fail(dir_, "tensor " + quote_text(info.name) + " is in both " +
                     first.path().filename().string() + " and " + added.path().filename().string() +
                     "; remove the stray file, or download the model again");
    }
    total_bytes_ += info.bytes;  // cannot overflow: each tensor lies inside a mapped file
  }
}

std::optional<ModelTensors::Located> ModelTensors::find(std::string_view name) const {
  const auto it = index_.find(name);
  if (it == index_.end()) return std::nullopt;
  const SafetensorsFile& file = files_[it->second.file];
  return Located{&file, &file.tensors()[it->second.tensor]};
}

std::vector<std::string_view> ModelTensors::names() const {
  std::vector<std::string_view> names;
  names.reserve(index_.size());
  for (const auto& entry : index_)
    names.push_back(entry.first);
  return names;
}

ModelTensors::Located ModelTensors::get(std::string_view name) const {
  const std::optional<Located> located = find(name);
  if (!located) {
    fail(dir_, "tensor " + std::string(name) +
                   " is missing from the model files; the download is incomplete or the files "
                   "do not match config.json");
  }
  return *located;
}

std::span<const std::byte> ModelTensors::data(std::string_view name) const {
  const Located located = get(name);
  return located.file->data(*located.info);
}

ModelTensors::Located ModelTensors::require(std::string_view name,
                                            std::initializer_list<kernels::DType> dtypes,
                                            const std::vector<std::int64_t>& shape) const {
  const Located located = get(name);
  const TensorInfo& info = *located.info;
  if (dtypes.size() > 0 && std::find(dtypes.begin(), dtypes.end(), info.dtype) == dtypes.end()) {
    std::string wanted;
    for (const kernels::DType dtype : dtypes) {
      if (!wanted.empty()) wanted += " or ";
      wanted += kernels::dtype_name(dtype);
    }
    fail(located.file->path(), info.name + " has dtype " +
                                   std::string(kernels::dtype_name(info.dtype)) + " where " +
                                   wanted + " is needed; " + std::string(kMismatchAdvice));
  }
  bool matches = shape.size() == info.shape.size();
  for (std::size_t i = 0; matches && i < shape.size(); ++i)
    matches = shape[i] < 0 || shape[i] == info.shape[i];
  if (!matches) {
    fail(located.file->path(), info.name + " has shape " + format_shape(info.shape) + " where " +
                                   format_shape(shape) + " is needed; " +
                                   std::string(kMismatchAdvice));
  }
  return located;
}

}  // namespace quire::engine::io
