#include "atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <string>
#include <system_error>

namespace quire::engine::io::detail {
namespace {

[[noreturn]] void throw_errno(int err, const std::filesystem::path& path, const char* action) {
  throw std::system_error(err, std::generic_category(), path.string() + ": " + action);
}

}  // namespace

AtomicFile::AtomicFile(std::filesystem::path target)
    : target_(std::move(target)), temp_(target_.string() + ".tmp") {
  fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) throw_errno(errno, temp_, "cannot create the file");
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) {
    ::close(fd_);
    ::unlink(temp_.c_str());
  }
}

void AtomicFile::write(std::span<const std::byte> bytes) {
  while (!bytes.empty()) {
    const ssize_t written = ::write(fd_, bytes.data(), bytes.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      throw_errno(errno, temp_, "cannot write the file");
    }
    // A short write is legal (a signal, a nearly full disk); the next call reports why.
    bytes = bytes.subspan(static_cast<std::size_t>(written));
  }
}

void AtomicFile::commit() {
  // fsync before rename: otherwise a crash could leave the new name on empty blocks.
  if (::fsync(fd_) != 0) throw_errno(errno, temp_, "cannot flush the file to disk");
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(temp_.c_str());
    throw_errno(err, temp_, "cannot close the file");
  }
  if (::rename(temp_.c_str(), target_.c_str()) != 0) {
    const int err = errno;
    ::unlink(temp_.c_str());
    throw_errno(err, target_, "cannot move the finished file into place");
  }
}

}  // namespace quire::engine::io::detail
