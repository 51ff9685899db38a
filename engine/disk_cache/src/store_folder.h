#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "quire/cache/page_hash.h"

namespace quire::engine::disk_cache {

// The files of a page store's folder: page files "<hash hex>.page",
// temporaries ".tmp-<hash hex>-<pid>-<n>" (each locked with flock by its
// writer while it lives) and the lock file ".lock". Other names are left alone.
class StoreFolder {
 public:
  struct PageEntry {
    cache::PageHash hash;
    std::optional<cache::PageHash> parent;  // nothing also when the header is unreadable
    std::uint64_t bytes = 0;
    std::int64_t mtime_ns = 0;
  };

  // An exclusive flock on "<folder>/.lock", held while it lives.
  class Lock {
   public:
    explicit Lock(const std::filesystem::path& file);
    ~Lock();
    Lock(const Lock&) = delete;
    Lock& operator=(const Lock&) = delete;

   private:
    int fd_ = -1;
  };

  // Creates the folder (and missing parents) with mode 0700; throws
  // std::system_error naming it when that fails.
  explicit StoreFolder(std::filesystem::path folder);

  const std::filesystem::path& path() const { return folder_; }
  std::filesystem::path page_path(const cache::PageHash& hash) const;
  std::filesystem::path temporary_path(const cache::PageHash& hash, std::uint64_t counter) const;
  Lock lock() const { return Lock(folder_ / ".lock"); }

  // The page files there now. Files that vanish while it looks are left out.
  std::vector<PageEntry> scan() const;
  std::uint64_t bytes_of(const std::vector<PageEntry>& entries) const;

  // Removes temporaries whose writer is gone (their flock can be taken).
  std::size_t remove_dead_temporaries() const;

  // Removes least recently used leaves (pages no stored page names as its
  // parent) until the page files take at most `limit` bytes; a parent
  // becomes a leaf once its last stored child is gone. The caller holds the lock.
  std::size_t evict_to(std::uint64_t limit) const;

  void remove_all_pages() const;

 private:
  std::optional<cache::PageHash> parent_of(const std::string& name, ino_t inode) const;

  std::filesystem::path folder_;
  // Parents read from headers, by file name and inode, so a scan reads each
  // file's header once.
  mutable std::mutex mutex_;
  mutable std::map<std::string, std::pair<ino_t, std::optional<cache::PageHash>>> parents_;
};

// 32 lowercase hex digits to a hash; nothing for any other text.
std::optional<cache::PageHash> parse_page_hash(std::string_view hex);

}  // namespace quire::engine::disk_cache
