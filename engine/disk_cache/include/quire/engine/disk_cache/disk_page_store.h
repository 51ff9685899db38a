#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "quire/cache/page_hash.h"
#include "quire/engine/disk_cache/model_identity.h"
#include "quire/engine/disk_cache/page_coding.h"
#include "quire/engine/disk_cache/page_file.h"

namespace quire::engine::disk_cache {

class PageFileOps;
class StoreFolder;

struct DiskPageStoreOptions {
  // Bytes the folder's page files may take; least recently used leaves go
  // first when a write would pass it.
  std::uint64_t limit_bytes = std::uint64_t{4} << 30;
  // Now, in nanoseconds since the epoch: stamped into a page file's
  // modification time when it is written or read, which is its recency for
  // eviction (so recency survives a restart). Empty: the system clock.
  std::function<std::int64_t()> clock;
  // The calls that write page files; null: the system's.
  PageFileOps* file_ops = nullptr;
};

enum class WriteStatus : std::uint8_t {
  Written,
  AlreadyStored,  // a file for the page was there; its recency is renewed
  TooLarge,       // one page alone is larger than the limit
  DiskFull,       // ENOSPC or EDQUOT; nothing was left behind
  Failed,         // another I/O error; nothing was left behind
};

struct WriteOutcome {
  WriteStatus status = WriteStatus::Written;
  int error = 0;        // errno for DiskFull and Failed
  std::string message;  // for DiskFull and Failed: the file, the step and the reason
};

enum class ReadStatus : std::uint8_t {
  Read,      // the page's bytes are in the buffer
  Missing,   // no file for the page
  Rejected,  // the file failed validation and was removed
  Failed,    // reading failed (an I/O error); the file is kept
};

struct ReadOutcome {
  ReadStatus status = ReadStatus::Missing;
  std::optional<PageFileProblem> problem;  // for Rejected
  std::string message;                     // for Rejected and Failed
  std::optional<cache::PageHash> parent;   // for Read
  std::uint32_t token_count = 0;           // for Read
};

struct StoreUsage {
  std::uint64_t bytes = 0;
  std::uint64_t pages = 0;
};

// The page files of one model and cache coding in one folder, named
// "<page hash hex>.page". Files are created 0600 (the folder 0700) under a
// temporary name, synced and renamed into place, so a reader sees a whole
// file or none. Every read validates the whole file (page_file.h); a file
// that fails is removed and reported, never returned. Several processes may
// share the folder: renames are atomic, eviction runs under an advisory lock
// (flock on "<folder>/.lock") and tolerates files that come and go.
// Methods may be called from several threads at once.
class DiskPageStore {
 public:
  // Creates the folder if needed, removes temporaries left by writers that
  // died and brings the folder within the limit. Throws std::system_error
  // naming the folder when it cannot be created or read.
  DiskPageStore(std::filesystem::path folder, ModelIdentity model, PageCoding coding,
                DiskPageStoreOptions options = {});
  ~DiskPageStore();
  DiskPageStore(const DiskPageStore&) = delete;
  DiskPageStore& operator=(const DiskPageStore&) = delete;

  const std::filesystem::path& folder() const;
  const ModelIdentity& model() const { return model_; }
  const PageCoding& coding() const { return coding_; }
  std::filesystem::path path_of(const cache::PageHash& hash) const;

  bool contains(const cache::PageHash& hash) const;

  // Reads the page into `payload` (coding().page_bytes() bytes, else
  // std::invalid_argument). After anything but Read its content is unspecified.
  ReadOutcome read(const cache::PageHash& hash, std::span<std::byte> payload);
  // Several pages at once: every file is opened and announced to the kernel
  // (read-ahead) before the first is read, and the pages are read and
  // checked on up to four threads. Throws std::invalid_argument, before
  // reading anything, for a buffer of the wrong size.
  std::vector<ReadOutcome> read_many(std::span<const cache::PageHash> hashes,
                                     std::span<const std::span<std::byte>> payloads);

  // Writes the page synchronously (DiskPageWriter does it in the background),
  // then removes least recently used leaves until the folder is within the limit.
  WriteOutcome write(const cache::PageHash& hash, const std::optional<cache::PageHash>& parent,
                     std::uint32_t token_count, std::span<const std::byte> payload);

  std::uint64_t limit() const { return limit_.load(); }
  // Takes effect at once: pages are removed until the folder fits.
  void set_limit(std::uint64_t bytes);
  StoreUsage usage() const;
  // Removes every page file of the folder.
  void clear();

  // Files removed because they failed validation, by this object.
  std::uint64_t rejected_files() const { return rejected_.load(); }
  // Temporaries of dead writers removed when the store was opened.
  std::uint64_t removed_temporaries() const { return removed_temporaries_; }

 private:
  ReadOutcome read_open(int fd, const cache::PageHash& hash, std::span<std::byte> payload);
  ReadOutcome reject(int fd, const cache::PageHash& hash, const PageFileCheck& check);
  std::int64_t now() const;

  ModelIdentity model_;
  PageCoding coding_;
  DiskPageStoreOptions options_;
  std::unique_ptr<StoreFolder> folder_;
  std::atomic<std::uint64_t> limit_;
  std::atomic<std::uint64_t> rejected_{0};
  std::atomic<std::uint64_t> temp_counter_{0};
  std::uint64_t removed_temporaries_ = 0;
};

const char* to_string(WriteStatus status);
const char* to_string(ReadStatus status);

}  // namespace quire::engine::disk_cache
