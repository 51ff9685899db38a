#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "quire/cache/page_hash.h"
#include "quire/engine/disk_cache/disk_page_store.h"

namespace quire::engine::disk_cache {

// What a full disk says, once.
inline constexpr std::string_view kDiskFullNotice =
    "the disk is full; the cache's disk tier stopped writing";

// One page for the writer: its identity and its bytes, copied out of the
// cache's storage, so the page may be reused the moment write() returns.
struct PageToWrite {
  cache::PageHash hash;
  std::optional<cache::PageHash> parent;
  std::uint32_t token_count = 0;
  std::vector<std::byte> payload;
};

struct DiskWriterStatus {
  std::uint64_t written = 0;
  std::uint64_t already_stored = 0;
  std::uint64_t too_large = 0;
  std::uint64_t dropped_queue_full = 0;  // write() found the queue full
  std::uint64_t dropped_disk_full = 0;   // queued or offered after the disk filled up
  std::uint64_t failed = 0;              // other I/O errors, one per page
  bool disk_full = false;
  std::string notice;      // kDiskFullNotice once the disk is full, else empty
  std::string last_error;  // the newest per-page error, for a log
};

// Writes pages to a DiskPageStore on a thread of its own, from a bounded
// queue, so that a reply never waits for the disk: write() only queues, and
// drops the page (counted) when the queue is full. A full disk (ENOSPC,
// EDQUOT) stops all writing with one notice; other errors are counted per
// page and writing goes on. The destructor writes what is queued, then stops.
class DiskPageWriter {
 public:
  DiskPageWriter(DiskPageStore& store, std::size_t queue_pages);
  ~DiskPageWriter();
  DiskPageWriter(const DiskPageWriter&) = delete;
  DiskPageWriter& operator=(const DiskPageWriter&) = delete;

  // Queues the page; false when it was dropped (queue full, or the disk full).
  bool write(PageToWrite page);
  // Waits until every page queued so far has been written or has failed.
  void flush();
  // Whether the page is queued or being written.
  bool pending(const cache::PageHash& hash) const;
  DiskWriterStatus status() const;

 private:
  void run();

  DiskPageStore& store_;
  std::size_t capacity_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable idle_;
  std::deque<PageToWrite> queue_;
  bool busy_ = false;
  cache::PageHash current_;  // the page being written, while busy_
  bool stopping_ = false;
  DiskWriterStatus status_;
  std::thread thread_;
};

}  // namespace quire::engine::disk_cache
