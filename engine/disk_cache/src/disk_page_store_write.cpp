// DiskPageStore: writing pages, the limit, usage and clearing.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <stdexcept>

#include "posix_helpers.h"
#include "quire/engine/disk_cache/disk_page_store.h"
#include "quire/engine/disk_cache/file_ops.h"
#include "store_folder.h"

namespace quire::engine::disk_cache {
namespace {

// New temporaries a write makes when stores opening meanwhile remove them.
constexpr int kTemporaryAttempts = 4;

}  // namespace

WriteOutcome DiskPageStore::write(const cache::PageHash& hash,
                                  const std::optional<cache::PageHash>& parent,
                                  std::uint32_t token_count, std::span<const std::byte> payload) {
  const std::vector<std::byte> file =
      encode_page_file(model_, coding_, hash, parent, token_count, payload);
  WriteOutcome outcome;
  if (file.size() > limit_.load()) {
    outcome.status = WriteStatus::TooLarge;
    return outcome;
  }
  const std::filesystem::path target = path_of(hash);
  const timespec times[2] = {detail::to_timespec(now()), detail::to_timespec(now())};
  if (::utimensat(AT_FDCWD, target.c_str(), times, AT_SYMLINK_NOFOLLOW) == 0) {
    outcome.status = WriteStatus::AlreadyStored;
    return outcome;
  }

  std::filesystem::path temporary;
  const auto fail = [&](const char* step, int err) {
    ::unlink(temporary.c_str());
    outcome.status = detail::is_disk_full(err) ? WriteStatus::DiskFull : WriteStatus::Failed;
    outcome.error = err;
    outcome.message = detail::failure(temporary, step, err);
    return outcome;
  };
  // The flock tells a store opening meanwhile that this temporary is alive
  // (StoreFolder::remove_dead_temporaries); it goes with the descriptor. A
  // store opening between the file's creation and its flock may take it for
  // a dead writer's and remove it: then the name no longer leads to this
  // file, and a new temporary is made.
  const auto create_locked = [&]() {
    for (int attempt = 0; attempt < kTemporaryAttempts; ++attempt) {
      temporary = folder_->temporary_path(hash, temp_counter_++);
      detail::Descriptor created(
          ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
      if (created.get() < 0) return created;
      struct stat opened {};
      struct stat named {};
      const bool locked = options_.file_ops->lock(created.get()) == 0;
      const bool ours = ::fstat(created.get(), &opened) == 0 &&
                        ::stat(temporary.c_str(), &named) == 0 && opened.st_ino == named.st_ino &&
                        opened.st_dev == named.st_dev;
      if (locked && ours) return created;
      if (ours) ::unlink(temporary.c_str());
    }
    errno = EAGAIN;
    return detail::Descriptor(-1);
  };
  const detail::Descriptor fd = create_locked();
  if (fd.get() < 0) {
    const int err = errno;
    outcome.status = detail::is_disk_full(err) ? WriteStatus::DiskFull : WriteStatus::Failed;
    outcome.error = err;
    outcome.message = detail::failure(temporary,
                                      err == EAGAIN ? "cannot keep the page file (other "
                                                      "processes opening the cache removed it)"
                                                    : "cannot create the page file",
                                      err);
    return outcome;
  }
  PageFileOps& ops = *options_.file_ops;
  if (const int err = ops.write_all(fd.get(), file); err != 0)
    return fail("cannot write the page file", err);
  // Synced before the rename: a crash must not leave the real name on blocks
  // that were never written.
  if (const int err = ops.sync(fd.get()); err != 0)
    return fail("cannot flush the page file to disk", err);
  ::futimens(fd.get(), times);

  // Renamed and evicted under the folder's lock, so that, between writes, the
  // folder is within the limit for every process that shares it.
  const StoreFolder::Lock lock = folder_->lock();
  if (const int err = ops.rename(temporary.c_str(), target.c_str()); err != 0)
    return fail("cannot move the page file into place", err);
  folder_->evict_to(limit_.load());
  return outcome;
}

void DiskPageStore::set_limit(std::uint64_t bytes) {
  limit_.store(bytes);
  const StoreFolder::Lock lock = folder_->lock();
  folder_->evict_to(bytes);
}

StoreUsage DiskPageStore::usage() const {
  const std::vector<StoreFolder::PageEntry> entries = folder_->scan();
  return StoreUsage{folder_->bytes_of(entries), entries.size()};
}

void DiskPageStore::clear() {
  const StoreFolder::Lock lock = folder_->lock();
  folder_->remove_all_pages();
}

}  // namespace quire::engine::disk_cache
