#pragma once

#include <cstddef>
#include <span>

namespace quire::engine::disk_cache {

// The system calls that write a page file, behind an interface so that tests
// can make them fail as a full disk or a broken one would. Each returns 0 or
// an errno value; none throws.
class PageFileOps {
 public:
  virtual ~PageFileOps() = default;

  // Writes all of `bytes` at the file's position (retrying short writes and
  // EINTR).
  virtual int write_all(int fd, std::span<const std::byte> bytes);
  virtual int sync(int fd);
  virtual int rename(const char* from, const char* to);
  // Takes the new temporary's exclusive flock without waiting (it tells
  // stores that open meanwhile that its writer is alive).
  virtual int lock(int fd);
};

// The real system calls.
PageFileOps& system_page_file_ops();

}  // namespace quire::engine::disk_cache
