#include "quire/engine/disk_cache/file_ops.h"

#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

namespace quire::engine::disk_cache {

int PageFileOps::write_all(int fd, std::span<const std::byte> bytes) {
  while (!bytes.empty()) {
    const ssize_t written = ::write(fd, bytes.data(), bytes.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    // A short write is legal (a signal, a nearly full disk); the next call says why.
    bytes = bytes.subspan(static_cast<std::size_t>(written));
  }
  return 0;
}

int PageFileOps::sync(int fd) {
  return ::fsync(fd) == 0 ? 0 : errno;
}

int PageFileOps::rename(const char* from, const char* to) {
  return ::rename(from, to) == 0 ? 0 : errno;
}

int PageFileOps::lock(int fd) {
  return ::flock(fd, LOCK_EX | LOCK_NB) == 0 ? 0 : errno;
}

PageFileOps& system_page_file_ops() {
  static PageFileOps ops;
  return ops;
}

}  // namespace quire::engine::disk_cache
