#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "quire/kernels/dtype.h"

namespace quire::engine::io {

// Collects tensors and writes them as safetensors files that SafetensorsFile and
// other safetensors readers accept.
//
// Layout: the header JSON is padded with spaces to a multiple of 8 bytes, so the
// data area starts 8-aligned. The data is contiguous (other readers reject gaps)
// and grouped by element size, largest first, keeping insertion order within a
// group; so every tensor starts at a multiple of its element size without
// padding between tensors. When all tensors have the same element size, this is
// plain insertion order.
//
// Files are written to "<path>.tmp" and renamed over <path> only when complete,
// so a reader never sees a half-written file. I/O failures throw
// std::system_error whose message names the file and the system's reason.
// Programming errors (a wrong byte count, a duplicate name) throw
// std::invalid_argument.
class SafetensorsWriter {
 public:
  // Copies `data`, which must hold exactly product(shape) * dtype_size(dtype) bytes.
  void add(std::string name, kernels::DType dtype, std::vector<std::int64_t> shape,
           std::span<const std::byte> data);
  // Takes `data` over without copying.
  void add(std::string name, kernels::DType dtype, std::vector<std::int64_t> shape,
           std::vector<std::byte>&& data);

  // Written as "__metadata__" into every file.
  void set_metadata(std::string key, std::string value);

  std::size_t size() const { return entries_.size(); }
  // What has been added, in order, without the data: for files that
  // describe the tensors (an EXL3 model's quantization_config.json).
  struct Listing {
    std::string_view name;
    kernels::DType dtype;
    std::span<const std::int64_t> shape;
    std::size_t bytes = 0;
  };
  std::vector<Listing> listing() const;
  std::uint64_t data_bytes() const { return data_bytes_; }

  // Writes every tensor into one file.
  void write(const std::filesystem::path& path) const;

  // Splits the tensors, in insertion order, over `shards` files of about equal
  // size (each gets at least one tensor), writes them into `dir` as
  // "model-0000i-of-0000N.safetensors", then "model.safetensors.index.json".
  // Returns the shard paths. 1 <= shards <= size() and shards <= 99999.
  std::vector<std::filesystem::path> write_sharded(const std::filesystem::path& dir,
                                                   int shards) const;

 private:
  struct Entry {
    std::string name;
    kernels::DType dtype;
    std::vector<std::int64_t> shape;
    std::vector<std::byte> data;
  };

  void check_new(const std::string& name, kernels::DType dtype,
                 const std::vector<std::int64_t>& shape, std::size_t bytes) const;
  void write_entries(const std::filesystem::path& path,
                     std::span<const Entry* const> entries) const;

  std::vector<Entry> entries_;
  std::set<std::string, std::less<>> names_;
  std::map<std::string, std::string> metadata_;
  std::uint64_t data_bytes_ = 0;
};

}  // namespace quire::engine::io
