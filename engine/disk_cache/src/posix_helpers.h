#pragma once

#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>

// Small helpers the page store's sources share (inline, so that a unity
// build sees one definition).
namespace quire::engine::disk_cache::detail {

inline timespec to_timespec(std::int64_t ns) {
  timespec time{};
  time.tv_sec = static_cast<time_t>(ns / 1'000'000'000);
  time.tv_nsec = static_cast<long>(ns % 1'000'000'000);
  return time;
}

// "<file>: <step>: <the system's reason>".
inline std::string failure(const std::filesystem::path& path, const char* step, int err) {
  return path.string() + ": " + step + ": " + std::strerror(err);
}

inline bool is_disk_full(int err) {
  return err == ENOSPC || err == EDQUOT;
}

// A descriptor closed when it goes out of scope.
class Descriptor {
 public:
  explicit Descriptor(int fd) : fd_(fd) {}
  ~Descriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  Descriptor(Descriptor&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  Descriptor& operator=(Descriptor&&) = delete;
  int get() const { return fd_; }
  // Gives up ownership.
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_;
};

}  // namespace quire::engine::disk_cache::detail
