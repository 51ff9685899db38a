#pragma once

#include <QTemporaryDir>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "quire/cache/page_hash.h"
#include "quire/engine/disk_cache/disk_page_store.h"
#include "quire/engine/disk_cache/file_ops.h"
#include "quire/engine/disk_cache/model_identity.h"
#include "quire/engine/disk_cache/page_coding.h"

namespace quire::test::disk_cache {

using namespace quire::engine::disk_cache;

std::filesystem::path path_of(const QTemporaryDir& dir);

// A small coding: `format`, 16-token pages, 3 layers of 2 KV heads of 32 dims.
PageCoding small_coding(cache::CacheFormat format = cache::CacheFormat::Q6, int layers = 3);
ModelIdentity model_number(std::uint8_t n);
std::vector<std::byte> random_payload(const PageCoding& coding, std::uint64_t seed);

// A chain of page hashes as the cache makes them: page i's parent is page i-1.
std::vector<cache::PageHash> chain(int pages, std::int64_t first_token);

// A clock that advances one microsecond each time it is read, from a fixed
// start, so recency is the order of writes and reads.
std::function<std::int64_t()> ticking_clock();

// The file's bytes; writes bytes over a file.
std::vector<std::byte> read_file(const std::filesystem::path& path);
void write_file(const std::filesystem::path& path, const std::vector<std::byte>& bytes);

// Names in the folder, sorted, without ".lock".
std::vector<std::string> folder_names(const std::filesystem::path& folder);
int mode_of(const std::filesystem::path& path);

// Page file calls that fail on demand: `step` fails with `error` (write
// after writing `bytes_before_failure` bytes, so a partial file exists).
class FailingOps : public PageFileOps {
 public:
  enum class Step { None, Write, Sync, Rename };

  void fail(Step step, int error, std::size_t bytes_before_failure = 0) {
    step_ = step;
    error_ = error;
    bytes_before_failure_ = bytes_before_failure;
  }

  int write_all(int fd, std::span<const std::byte> bytes) override;
  int sync(int fd) override;
  int rename(const char* from, const char* to) override;

 private:
  std::atomic<Step> step_{Step::None};
  std::atomic<int> error_{0};
  std::atomic<std::size_t> bytes_before_failure_{0};
};

// Page file writes that wait, inside write_all, until released: the writer
// thread is then known to be busy with one page.
class GateOps : public PageFileOps {
 public:
  int write_all(int fd, std::span<const std::byte> bytes) override;
  void wait_until_entered();
  void release();

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  bool entered_ = false;
  bool released_ = false;
};

}  // namespace quire::test::disk_cache
