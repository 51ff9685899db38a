#pragma once

#include <cstddef>
#include <filesystem>
#include <span>

namespace quire::engine::io::detail {

// A file written under "<target>.tmp" and renamed over <target> by commit(), so
// readers see either the old file or the complete new one. Destroyed without
// commit() (an exception on the way), it removes the temporary file. Every
// failure throws std::system_error naming the file; its what() ends with the
// system's reason.
class AtomicFile {
 public:
  explicit AtomicFile(std::filesystem::path target);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(std::span<const std::byte> bytes);
  // Flushes to disk, closes and renames into place.
  void commit();

 private:
  std::filesystem::path target_;
  std::filesystem::path temp_;
  int fd_ = -1;
};

}  // namespace quire::engine::io::detail
