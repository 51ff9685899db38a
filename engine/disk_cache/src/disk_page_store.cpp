#include "quire/engine/disk_cache/disk_page_store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <thread>

#include "posix_helpers.h"
#include "quire/engine/disk_cache/file_ops.h"
#include "store_folder.h"

namespace quire::engine::disk_cache {
namespace {

using detail::Descriptor;
using detail::failure;
using detail::to_timespec;

// Streaming a foreign file through the checksum, a piece at a time.
constexpr std::size_t kChecksumChunk = std::size_t{1} << 20;
// Threads that read and check the pages of one read_many at most.
constexpr std::size_t kReadThreads = 4;

// Reads exactly `size` bytes at `offset`; 0, an errno value, or -1 at the end of the file.
int read_exactly(int fd, std::byte* into, std::size_t size, std::uint64_t offset) {
  while (size > 0) {
    const ssize_t got = ::pread(fd, into, size, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return errno;
    if (got == 0) return -1;
    into += got;
    size -= static_cast<std::size_t>(got);
    offset += static_cast<std::uint64_t>(got);
  }
  return 0;
}

}  // namespace

const char* to_string(WriteStatus status) {
  switch (status) {
    case WriteStatus::Written:
      return "written";
    case WriteStatus::AlreadyStored:
      return "already stored";
    case WriteStatus::TooLarge:
      return "larger than the limit";
    case WriteStatus::DiskFull:
      return "disk full";
    case WriteStatus::Failed:
      return "failed";
  }
  return "unknown";
}

const char* to_string(ReadStatus status) {
  switch (status) {
    case ReadStatus::Read:
      return "read";
    case ReadStatus::Missing:
      return "missing";
    case ReadStatus::Rejected:
      return "rejected";
    case ReadStatus::Failed:
      return "failed";
  }
  return "unknown";
}

DiskPageStore::DiskPageStore(std::filesystem::path folder, ModelIdentity model, PageCoding coding,
                             DiskPageStoreOptions options)
    : model_(model),
      coding_(std::move(coding)),
      options_(std::move(options)),
      folder_(std::make_unique<StoreFolder>(std::move(folder))),
      limit_(options_.limit_bytes) {
  coding_.check();
  if (options_.file_ops == nullptr) options_.file_ops = &system_page_file_ops();
  const StoreFolder::Lock lock = folder_->lock();
  removed_temporaries_ = folder_->remove_dead_temporaries();
  folder_->evict_to(limit_.load());
}

DiskPageStore::~DiskPageStore() = default;

const std::filesystem::path& DiskPageStore::folder() const {
  return folder_->path();
}

std::filesystem::path DiskPageStore::path_of(const cache::PageHash& hash) const {
  return folder_->page_path(hash);
}

std::int64_t DiskPageStore::now() const {
  if (options_.clock) return options_.clock();
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

bool DiskPageStore::contains(const cache::PageHash& hash) const {
  struct stat st {};
  return ::stat(path_of(hash).c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

ReadOutcome DiskPageStore::read(const cache::PageHash& hash, std::span<std::byte> payload) {
  if (payload.size() != static_cast<std::uint64_t>(coding_.page_bytes()))
    throw std::invalid_argument("disk cache: a page takes " + std::to_string(coding_.page_bytes()) +
                                " bytes, the buffer holds " + std::to_string(payload.size()));
  const Descriptor fd(::open(path_of(hash).c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (fd.get() < 0) {
    if (errno == ENOENT) return ReadOutcome{};
    ReadOutcome outcome;
    outcome.status = ReadStatus::Failed;
    outcome.message = failure(path_of(hash), "cannot open the page file", errno);
    return outcome;
  }
  return read_open(fd.get(), hash, payload);
}

std::vector<ReadOutcome> DiskPageStore::read_many(std::span<const cache::PageHash> hashes,
                                                  std::span<const std::span<std::byte>> payloads) {
  if (hashes.size() != payloads.size())
    throw std::invalid_argument("disk cache: " + std::to_string(hashes.size()) + " pages but " +
                                std::to_string(payloads.size()) + " buffers");
  for (std::size_t i = 0; i < payloads.size(); ++i) {
    if (payloads[i].size() != static_cast<std::uint64_t>(coding_.page_bytes()))
      throw std::invalid_argument("disk cache: buffer " + std::to_string(i) + " holds " +
                                  std::to_string(payloads[i].size()) + " bytes, a page takes " +
                                  std::to_string(coding_.page_bytes()));
  }
  std::vector<Descriptor> files;
  files.reserve(hashes.size());
  for (const cache::PageHash& hash : hashes) {
    files.emplace_back(::open(path_of(hash).c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
    if (files.back().get() >= 0) ::posix_fadvise(files.back().get(), 0, 0, POSIX_FADV_WILLNEED);
  }
  // Checking a page's checksum costs about what reading it from the page
  // cache does: pages are read and checked on several threads at once.
  std::vector<ReadOutcome> outcomes(hashes.size());
  const std::size_t workers = std::min<std::size_t>(
      {hashes.size(), std::max(1u, std::thread::hardware_concurrency()), kReadThreads});
  std::vector<std::exception_ptr> errors(workers);
  const auto work = [&](std::size_t worker) {
    try {
      for (std::size_t i = worker; i < hashes.size(); i += workers) {
        outcomes[i] = files[i].get() < 0
                          ? read(hashes[i], payloads[i])  // says why it could not be opened
                          : read_open(files[i].get(), hashes[i], payloads[i]);
      }
    } catch (...) {
      errors[worker] = std::current_exception();
    }
  };
  std::vector<std::thread> threads;
  for (std::size_t worker = 1; worker < workers; ++worker)
    threads.emplace_back(work, worker);
  if (workers > 0) work(0);
  for (std::thread& thread : threads)
    thread.join();
  for (const std::exception_ptr& error : errors) {
    if (error) std::rethrow_exception(error);
  }
  return outcomes;
}

ReadOutcome DiskPageStore::read_open(int fd, const cache::PageHash& hash,
                                     std::span<std::byte> payload) {
  const std::filesystem::path path = path_of(hash);
  ReadOutcome failed;
  failed.status = ReadStatus::Failed;
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    failed.message = failure(path, "cannot read the page file's size", errno);
    return failed;
  }
  const auto file_size = static_cast<std::uint64_t>(st.st_size);
  const std::uint64_t expected_header =
      kPageFileFixedHeader + kPageFileLayerEntry * coding_.layers.size();
  std::vector<std::byte> prefix(std::min(file_size, expected_header));
  int err = read_exactly(fd, prefix.data(), prefix.size(), 0);
  if (err == 0 && prefix.size() >= kPageFileFixedHeader) {
    // Another coding may have another layer count: read its whole table.
    const std::uint64_t header_bytes = page_header_bytes(prefix);
    if (header_bytes > prefix.size() && header_bytes <= file_size) {
      prefix.resize(header_bytes);
      err = read_exactly(fd, prefix.data(), prefix.size(), 0);
    }
  }
  if (err > 0) {
    failed.message = failure(path, "cannot read the page file", err);
    return failed;
  }
  PageFileHeader header;
  PageFileCheck check = parse_page_header(prefix, file_size, header);
  if (!check) return reject(fd, hash, check);
  // A file with fewer layers than ours was read past its table.
  prefix.resize(header.header_bytes());

  const PageExpectation expected{model_, &coding_, hash};
  const PageFileCheck identity = compare_with_expectation(header, expected);
  PageChecksum checksum;
  checksum.update(prefix);
  std::array<std::uint8_t, kPageFileChecksum> stored{};
  if (identity) {
    // The expected page: its bytes go straight into the caller's buffer.
    iovec parts[2] = {{payload.data(), payload.size()}, {stored.data(), stored.size()}};
    std::uint64_t offset = prefix.size();
    std::size_t left = payload.size() + stored.size();
    int part = 0;
    while (left > 0) {
      const ssize_t got = ::preadv(fd, parts + part, 2 - part, static_cast<off_t>(offset));
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        failed.message = failure(path, "cannot read the page file", got < 0 ? errno : EIO);
        return failed;
      }
      offset += static_cast<std::uint64_t>(got);
      left -= static_cast<std::size_t>(got);
      std::size_t consumed = static_cast<std::size_t>(got);
      while (part < 2 && consumed >= parts[part].iov_len)
        consumed -= parts[part++].iov_len;
      if (part < 2) {
        parts[part].iov_base = static_cast<std::byte*>(parts[part].iov_base) + consumed;
        parts[part].iov_len -= consumed;
      }
    }
    checksum.update(payload);
  } else {
    // Another model, coding or page, if it is intact: check that it is, to
    // tell damage from a foreign file.
    std::vector<std::byte> chunk(std::min<std::uint64_t>(kChecksumChunk, header.payload_bytes()));
    std::uint64_t offset = prefix.size();
    for (std::uint64_t left = header.payload_bytes(); left > 0;) {
      const std::size_t size =
          static_cast<std::size_t>(std::min<std::uint64_t>(left, chunk.size()));
      err = read_exactly(fd, chunk.data(), size, offset);
      if (err != 0) {
        failed.message = failure(path, "cannot read the page file", err > 0 ? err : EIO);
        return failed;
      }
      checksum.update(std::span(chunk).first(size));
      offset += size;
      left -= size;
    }
    err = read_exactly(fd, reinterpret_cast<std::byte*>(stored.data()), stored.size(), offset);
    if (err != 0) {
      failed.message = failure(path, "cannot read the page file", err > 0 ? err : EIO);
      return failed;
    }
  }
  if (checksum.finish() != stored)
    return reject(fd, hash,
                  PageFileCheck{PageFileProblem::ChecksumMismatch,
                                "the bytes do not match the file's checksum"});
  if (!identity) return reject(fd, hash, identity);

  // Reading a page makes it the most recently used.
  const timespec times[2] = {to_timespec(now()), to_timespec(now())};
  ::futimens(fd, times);
  ReadOutcome outcome;
  outcome.status = ReadStatus::Read;
  outcome.parent = header.parent;
  outcome.token_count = header.token_count;
  return outcome;
}

ReadOutcome DiskPageStore::reject(int fd, const cache::PageHash& hash, const PageFileCheck& check) {
  const std::filesystem::path path = path_of(hash);
  // Remove the file that was read, not one another process has since renamed
  // into its place.
  struct stat opened {
  }, named{};
  if (::fstat(fd, &opened) == 0 && ::stat(path.c_str(), &named) == 0 &&
      opened.st_ino == named.st_ino && opened.st_dev == named.st_dev) {
    const StoreFolder::Lock lock = folder_->lock();
    if (::stat(path.c_str(), &named) == 0 && opened.st_ino == named.st_ino) ::unlink(path.c_str());
  }
  ++rejected_;
  ReadOutcome outcome;
  outcome.status = ReadStatus::Rejected;
  outcome.problem = check.problem;
  outcome.message = path.string() + ": " + to_string(*check.problem) + ": " + check.detail +
                    "; the page file was removed and the page will be computed again";
  return outcome;
}

}  // namespace quire::engine::disk_cache
