#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <unordered_set>
#include <vector>

#include "quire/cache/disk_index.h"
#include "quire/cache/page_cache.h"
#include "quire/engine/disk_cache/disk_page_store.h"
#include "quire/engine/disk_cache/disk_page_writer.h"
#include "quire/engine/disk_cache/file_ops.h"
#include "quire/engine/runtime/kv_storage.h"

namespace quire::engine {

// The default size of the disk tier: 4 GiB, some dozens of long chats of a
// small model, or a few of an 8B one, on any disk a desktop has.
inline constexpr std::uint64_t kDefaultDiskCacheBytes = std::uint64_t{4} << 30;

struct DiskTierOptions {
  // The disk cache's root: each model's pages go to
  // <root>/<model identity>/<coding key> (disk_cache::store_folder).
  std::filesystem::path root;
  // Bytes the whole root may take, every model's pages together: other
  // models' pages, least recently used first, make room for this one's
  // when the tier opens (trim_other_models), and this model's own pages are
  // kept within what is left.
  std::uint64_t limit_bytes = kDefaultDiskCacheBytes;
  // Bytes of pages the background writer may hold while the disk catches up;
  // past it, evicted pages are not written (a reply never waits for the disk).
  std::uint64_t queue_bytes = std::uint64_t{256} << 20;
  // Engine settings beside the model's files that change the K/V bytes
  // (disk_cache::model_identity's `extra`).
  std::string identity_extra;
  // The calls that write page files; null: the system's. Tests make them
  // fail as a full or broken disk would.
  disk_cache::PageFileOps* file_ops = nullptr;
};

// What the tier did, for the statistics and the user.
struct DiskTierStatus {
  std::filesystem::path folder;
  std::uint64_t limit_bytes = 0;
  disk_cache::StoreUsage usage;
  disk_cache::DiskWriterStatus writer;
  std::uint64_t restored_pages = 0;
  std::uint64_t failed_restores = 0;  // missing, damaged or unreadable when read
  std::uint64_t rejected_files = 0;   // damaged or foreign files removed
  std::uint64_t archived_pages = 0;   // written by archive()
};

// What archive() wrote.
struct ArchiveResult {
  std::uint64_t written = 0;
  std::uint64_t already_stored = 0;
  std::uint64_t left_out = 0;  // past the limit, or after the disk filled up
  std::string error;           // the first write error, if any
};

// The third tier of the KV cache, on disk, for one loaded model: the page
// store of its identity and cache coding, a background writer, and the
// index the bookkeeping asks (cache::DiskIndex). It moves page bytes
// between KvStorage and page files: evicted pages are copied out at once and
// written in the background; restores read whole pages (several at once)
// and put them in place; archive() writes what the device cache holds, for a
// quit or an unload. Used by the engine thread; the writer has its own.
class DiskTier final : public cache::DiskIndex {
 public:
  // Opens (creating) the model's folder under options.root. Throws
  // std::system_error naming the folder when it cannot be made or read,
  // ModelError when the model's files cannot be read for its identity,
  // std::invalid_argument for a cache this tier cannot keep (a window pool).
  DiskTier(const std::filesystem::path& model_directory, KvStorage& storage,
           const cache::CacheConfig& cache, DiskTierOptions options);
  ~DiskTier() override;
  DiskTier(const DiskTier&) = delete;
  DiskTier& operator=(const DiskTier&) = delete;

  const disk_cache::ModelIdentity& model() const { return store_->model(); }
  const disk_cache::PageCoding& coding() const { return store_->coding(); }
  const std::filesystem::path& folder() const { return store_->folder(); }

  bool holds(const cache::PageHash& hash) const override;

  // Copies the pages out of the storage and queues them for writing; when
  // the queue is full they are dropped (counted), never waited for.
  void save(std::span<const cache::DiskSave> saves);
  // Reads the pages into their device pages. Returns the hashes that could
  // not be read (gone, damaged, unreadable): their pages hold unknown bytes,
  // and the tier no longer claims to hold them.
  std::vector<cache::PageHash> restore(std::span<const cache::DiskRestore> restores);
  // Writes the full, hashed pages of the device cache that the disk lacks,
  // the most recently used within the limit, and waits until every queued
  // page is written: for a quit or an unload, so that the next start finds
  // the chats' pages.
  ArchiveResult archive(const cache::PageCache& cache);
  // Waits until every queued page is written.
  void flush();

  // A new limit for the whole root, applied as when the tier opens: other
  // models' pages give way first, and this model's are kept within the rest.
  void set_limit(std::uint64_t bytes);
  // Removes every page file of this model and coding.
  void clear();
  DiskTierStatus status() const;

 private:
  // This model's share of a limit for the whole root (trim_other_models).
  std::uint64_t own_share(const disk_cache::ModelIdentity& model, std::uint64_t limit) const;

  std::filesystem::path root_;
  KvStorage& storage_;
  std::unique_ptr<disk_cache::DiskPageStore> store_;
  std::unique_ptr<disk_cache::DiskPageWriter> writer_;
  // Files that failed to read but were kept (an I/O error): not offered again.
  std::unordered_set<cache::PageHash, cache::PageHashHasher> refused_;
  std::uint64_t restored_pages_ = 0;
  std::uint64_t failed_restores_ = 0;
  std::uint64_t archived_pages_ = 0;
};

// Removes other models' folders under `root`, least recently used first
// (by the newest page file in each), until they take at most
// `others_budget` bytes. Returns the bytes they take afterwards. Folders
// that vanish meanwhile are skipped.
std::uint64_t trim_other_models(const std::filesystem::path& root,
                                const disk_cache::ModelIdentity& keep, std::uint64_t others_budget);

}  // namespace quire::engine
