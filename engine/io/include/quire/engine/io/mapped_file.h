#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <utility>

namespace quire::engine::io {

// A whole file mapped read-only into memory, so multi-gigabyte weights are paged
// in by the kernel on demand instead of being copied. The mapping lives as long
// as the object; the spans it hands out point into it. Move-only.
//
// open() throws ModelError naming the file and the system's reason when the
// file cannot be opened, is not a regular file, or cannot be mapped. An empty
// file is valid and maps to an empty span.
//
// A file that another program shrinks while it is mapped raises SIGBUS when the
// lost pages are touched; model files are not expected to change while loaded.
class MappedFile {
 public:
  MappedFile() = default;
  static MappedFile open(const std::filesystem::path& path);

  ~MappedFile();
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::span<const std::byte> bytes() const { return {static_cast<const std::byte*>(base_), size_}; }
  std::uint64_t size() const { return size_; }

 private:
  MappedFile(std::filesystem::path path, void* base, std::size_t size)
      : path_(std::move(path)), base_(base), size_(size) {}
  void unmap() noexcept;

  std::filesystem::path path_;
  void* base_ = nullptr;  // null for an empty file or a moved-from object
  std::size_t size_ = 0;
};

}  // namespace quire::engine::io
