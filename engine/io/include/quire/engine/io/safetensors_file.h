#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "quire/engine/io/mapped_file.h"
#include "quire/kernels/dtype.h"

namespace quire::engine::io {

// One tensor of a safetensors file, as validated by SafetensorsFile::open:
// bytes == elements() * dtype_size(dtype), and [offset, offset + bytes) lies
// inside the file and overlaps no other tensor.
struct TensorInfo {
  std::string name;
  kernels::DType dtype = kernels::DType::F32;
  std::vector<std::int64_t> shape;  // empty for a scalar
  std::uint64_t offset = 0;         // absolute, from the start of the file
  std::uint64_t bytes = 0;

  // Product of the dimensions (1 for a scalar). Cannot overflow for a TensorInfo
  // that came from a validated file.
  std::int64_t elements() const;
};

// "[64, 32]"; a negative dimension (a wildcard in ModelTensors::require) prints as "?".
std::string format_shape(std::span<const std::int64_t> shape);

// A safetensors file: an 8-byte little-endian header length N, N bytes of JSON
// describing the tensors, then their data. The file is treated as untrusted:
// open() checks every length, offset and shape (with overflow-safe arithmetic)
// and throws ModelError, naming the file, the tensor and the numbers, before
// anything is handed out. Afterwards every accessor is bounds-safe.
//
// Tensors may sit at any byte offset, so data() is not necessarily aligned for
// its dtype in files written elsewhere; copy before reading as a wider type
// (files written by SafetensorsWriter are aligned).
class SafetensorsFile {
 public:
  // The reference implementation's limit; real headers are a few megabytes at most.
  static constexpr std::uint64_t kMaxHeaderBytes = 100'000'000;

  static SafetensorsFile open(const std::filesystem::path& path);

  const std::filesystem::path& path() const { return file_.path(); }
  std::uint64_t file_size() const { return file_.size(); }
  // Where the data area starts: 8 + the header length.
  std::uint64_t data_start() const { return data_start_; }

  // In the order of their data in the file.
  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  const TensorInfo* find(std::string_view name) const;
  // The tensor's bytes. `info` must come from this file; anything else that
  // does not lie within the file throws std::out_of_range.
  std::span<const std::byte> data(const TensorInfo& info) const;

  // The optional "__metadata__" object (string to string).
  const std::map<std::string, std::string>& metadata() const { return metadata_; }

 private:
  SafetensorsFile() = default;

  MappedFile file_;
  std::uint64_t data_start_ = 0;
  std::vector<TensorInfo> tensors_;
  std::map<std::string, std::size_t, std::less<>> by_name_;
  std::map<std::string, std::string> metadata_;
};

}  // namespace quire::engine::io
