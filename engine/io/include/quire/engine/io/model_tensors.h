#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <map>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "quire/engine/io/safetensors_file.h"
#include "quire/kernels/dtype.h"

namespace quire::engine::io {

// Every tensor of a model directory, from whichever layout it uses:
//   1. "model.safetensors", a single file;
//   2. the shards listed in "model.safetensors.index.json" ("weight_map":
//      tensor name -> file name in the same directory);
//   3. otherwise every "*.safetensors" file in the directory, in name order
//      (EXL2 conversions write "output-0000i-of-0000N.safetensors" without an index).
// open() validates every file (SafetensorsFile::open), checks the index against
// the shards and that no tensor name appears in two files, and throws ModelError
// otherwise. Tensors a shard holds beyond those its index lists are kept.
class ModelTensors {
 public:
  struct Located {
    const SafetensorsFile* file;
    const TensorInfo* info;
  };

  // A dimension in require()'s expected shape that may take any value.
  static constexpr std::int64_t kAnyDim = -1;

  static constexpr std::string_view kSingleFileName = "model.safetensors";
  static constexpr std::string_view kIndexFileName = "model.safetensors.index.json";

  static ModelTensors open(const std::filesystem::path& dir);

  const std::filesystem::path& directory() const { return dir_; }
  // In the order they were opened: index shards and directory files by name.
  const std::vector<SafetensorsFile>& files() const { return files_; }

  std::optional<Located> find(std::string_view name) const;
  bool contains(std::string_view name) const { return index_.contains(name); }
  // Every tensor name, sorted. The views live as long as this object.
  std::vector<std::string_view> names() const;
  std::size_t size() const { return index_.size(); }
  // Sum of the data bytes of every tensor.
  std::uint64_t total_bytes() const { return total_bytes_; }

  // Like find(), but a missing tensor throws ModelError naming it and the directory.
  Located get(std::string_view name) const;
  std::span<const std::byte> data(std::string_view name) const;

  // get(), then checks that the tensor has one of `dtypes` and exactly `shape`
  // (kAnyDim matches any size), and throws ModelError naming the file, the tensor
  // and both shapes otherwise: the files do not match config.json.
  Located require(std::string_view name, std::initializer_list<kernels::DType> dtypes,
                  const std::vector<std::int64_t>& shape) const;

 private:
  struct Slot {
    std::size_t file;
    std::size_t tensor;
  };

  ModelTensors() = default;
  void add_file(SafetensorsFile file);

  std::filesystem::path dir_;
  std::vector<SafetensorsFile> files_;
  // Keys view the names inside files_; moving a vector keeps its elements in
  // place, so the views stay valid when a ModelTensors is moved.
  std::map<std::string_view, Slot, std::less<>> index_;
  std::uint64_t total_bytes_ = 0;
};

}  // namespace quire::engine::io
