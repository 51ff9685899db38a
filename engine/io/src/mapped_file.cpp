#include "quire/engine/io/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "io_errors.h"

namespace quire::engine::io {
namespace {

// Closes the descriptor on every path out of open(); the mapping does not need it.
class FdGuard {
 public:
  explicit FdGuard(int fd) : fd_(fd) {}
  ~FdGuard() { ::close(fd_); }
  FdGuard(const FdGuard&) = delete;
  FdGuard& operator=(const FdGuard&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

[[noreturn]] void fail_errno(const std::filesystem::path& path, std::string_view action, int err,
                             std::string_view advice) {
  detail::fail(path, std::string(action) + ": " + std::strerror(err) + "; " + std::string(advice));
}

}  // namespace

MappedFile MappedFile::open(const std::filesystem::path& path) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer
  // forever; for regular files it changes nothing.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    fail_errno(path, "cannot open the file", errno,
               "check that it exists and that you may read it");
  }
  const FdGuard guard(fd);

  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    fail_errno(path, "cannot read the file's size", errno, "check the disk and try again");
  }
  if (!S_ISREG(info.st_mode)) {
    detail::fail(path,
                 "is not a regular file (a directory, device or pipe); "
                 "point Quire at the model's files");
  }
  if (info.st_size < 0) detail::fail(path, "the system reports a negative file size");
  const auto size = static_cast<std::uint64_t>(info.st_size);
  if (size > SIZE_MAX) {
    detail::fail(path, "is " + std::to_string(size) + " bytes, more than this system can map");
  }
  if (size == 0) return MappedFile(path, nullptr, 0);  // mmap rejects a length of 0

  void* base = ::mmap(nullptr, static_cast<std::size_t>(size), PROT_READ, MAP_PRIVATE, fd, 0);
  if (base == MAP_FAILED) {
    fail_errno(path, "cannot map the " + std::to_string(size) + "-byte file into memory", errno,
               "free some memory or address space and try again");
  }
  return MappedFile(path, base, static_cast<std::size_t>(size));
}

MappedFile::~MappedFile() {
  unmap();
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : path_(std::move(other.path_)),
      base_(std::exchange(other.base_, nullptr)),
      size_(std::exchange(other.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    unmap();
    path_ = std::move(other.path_);
    base_ = std::exchange(other.base_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

void MappedFile::unmap() noexcept {
  if (base_ != nullptr) ::munmap(base_, size_);
  base_ = nullptr;
  size_ = 0;
}

}  // namespace quire::engine::io
