// HubCache::remove_snapshot: one snapshot out of the shared cache, as
// huggingface_hub's delete_revisions does it, so that its scan-cache and
// Hugging Face's JavaScript client read the cache afterwards without a
// warning: no ref is left naming a missing commit, no blob another snapshot
// still links to is deleted.

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <fstream>
#include <set>
#include <sstream>
#include <system_error>
#include <utility>
#include <vector>

#include "quire/hub/hub_cache.h"
#include "quire/hub/hub_error.h"

namespace quire::hub {
namespace fs = std::filesystem;
namespace {

// A download's lock (<root>/.locks/models--org--name/<etag>.lock), taken
// without waiting for as long as this object lives. Downloads, Quire's and
// huggingface_hub's alike, flock() it while they write the partial file.
class DownloadLockProbe {
 public:
  explicit DownloadLockProbe(const fs::path& path) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) {
      // No lock file: nothing that locks has downloaded it since the lock
      // folder was made. Any other failure is counted as a download running.
      busy_ = errno != ENOENT;
      return;
    }
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      busy_ = true;
      ::close(fd_);
      fd_ = -1;
    }
  }
  DownloadLockProbe(const DownloadLockProbe&) = delete;
  DownloadLockProbe& operator=(const DownloadLockProbe&) = delete;
  DownloadLockProbe(DownloadLockProbe&& other) noexcept
      : fd_(std::exchange(other.fd_, -1)), busy_(other.busy_) {}
  DownloadLockProbe& operator=(DownloadLockProbe&&) = delete;
  ~DownloadLockProbe() {
    if (fd_ < 0) return;
    ::flock(fd_, LOCK_UN);
    ::close(fd_);
  }

  // Another process (or download) holds the lock.
  bool busy() const { return busy_; }

 private:
  int fd_ = -1;
  bool busy_ = false;
};

// True when `inner` lies strictly inside `outer`; both canonical.
bool strictly_inside(const fs::path& inner, const fs::path& outer) {
  const fs::path relative = inner.lexically_relative(outer);
  return !relative.empty() && relative != "." && *relative.begin() != "..";
}

bool is_own_folder(const fs::path& path) {
  std::error_code error;
  return fs::is_directory(fs::symlink_status(path, error));
}

bool is_partial_of(const std::string& name, const std::string& etag) {
  // <etag>.incomplete (Quire, huggingface_hub up to 1.17) and
  // <etag>.<8 hex>.incomplete (huggingface_hub 1.18 and later).
  return name.size() > etag.size() && name.starts_with(etag) && name[etag.size()] == '.' &&
         name.ends_with(".incomplete");
}

std::string trimmed_file(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream text;
  text << file.rdbuf();
  std::string content = text.str();
  while (!content.empty() && std::isspace(static_cast<unsigned char>(content.back())))
    content.pop_back();
  return content;
}

// The deletions of one removal, each checked against the cache's root.
class CacheEraser {
 public:
  CacheEraser(const fs::path& root, std::string repo) : repo_(std::move(repo)) {
    std::error_code error;
    root_ = fs::weakly_canonical(root, error);
    if (error)
      throw HubError("The cache " + root.string() + " cannot be read: " + error.message() + ".");
  }

  const fs::path& root() const { return root_; }

  // Throws unless `path` is a folder of its own, not a link, inside the root.
  void require_own_folder(const fs::path& path) const {
    if (!is_own_folder(path))
      throw HubError(path.string() + " is a link, not a folder of the cache; nothing of " + repo_ +
                     " was deleted through it.");
    require_inside(path);
  }

  // Deletes `path` (a file, a link but not what it leads to, or a folder
  // with everything in it) and returns the bytes of the regular files it held.
  std::int64_t erase(const fs::path& path) const {
    require_inside(path);
    std::error_code error;
    if (!fs::exists(fs::symlink_status(path, error))) return 0;
    std::int64_t bytes = 0;
    if (fs::is_regular_file(fs::symlink_status(path, error))) bytes = size_of(path);
    fs::remove_all(path, error);
    if (error)
      throw HubError("Cannot delete " + path.string() + " from the cache: " + error.message() +
                     ".");
    return bytes;
  }

  static std::int64_t size_of(const fs::path& file) {
    std::error_code error;
    const std::uintmax_t size = fs::file_size(file, error);
    return error ? 0 : static_cast<std::int64_t>(size);
  }

 private:
  void require_inside(const fs::path& path) const {
    std::error_code error;
    const fs::path real = fs::weakly_canonical(path.parent_path(), error) / path.filename();
    if (error || !strictly_inside(real, root_))
      throw HubError(path.string() + " lies outside the cache " + root_.string() +
                     "; it is not deleted.");
  }

  fs::path root_;
  std::string repo_;
};

// The names in `blobs` that the files of `snapshot` link to; the bytes of the
// files it holds as copies are added to `copied_bytes`.
std::set<std::string> blobs_linked_from(const fs::path& snapshot, const fs::path& blobs,
                                        std::int64_t& copied_bytes) {
  std::set<std::string> names;
  std::error_code error;
  const fs::path real_blobs = fs::weakly_canonical(blobs, error);
  for (fs::recursive_directory_iterator it(snapshot, error), end; !error && it != end;
       it.increment(error)) {
    std::error_code entry_error;
    const fs::file_status status = it->symlink_status(entry_error);
    if (fs::is_regular_file(status)) {
      copied_bytes += CacheEraser::size_of(it->path());
      continue;
    }
    if (!fs::is_symlink(status)) continue;
    const fs::path target = fs::read_symlink(it->path(), entry_error);
    if (entry_error) continue;
    const fs::path whole = target.is_absolute() ? target : it->path().parent_path() / target;
    const fs::path folder = fs::weakly_canonical(whole.parent_path(), entry_error);
    if (!entry_error && folder == real_blobs) names.insert(whole.filename().string());
  }
  return names;
}

// Deletes every ref naming `hash`, and the folders of refs/pr/N left empty;
// refs/ itself stays (Hugging Face's JavaScript client expects it).
void remove_refs_naming(const CacheEraser& eraser, const fs::path& refs, const std::string& hash) {
  std::error_code error;
  if (!fs::exists(fs::symlink_status(refs, error))) return;
  eraser.require_own_folder(refs);
  std::vector<fs::path> named;
  std::vector<fs::path> folders;
  for (fs::recursive_directory_iterator it(refs, error), end; !error && it != end;
       it.increment(error)) {
    std::error_code entry_error;
    const fs::file_status status = it->symlink_status(entry_error);
    if (fs::is_directory(status)) folders.push_back(it->path());
    if (fs::is_regular_file(status) && trimmed_file(it->path()) == hash)
      named.push_back(it->path());
  }
  for (const fs::path& ref : named)
    eraser.erase(ref);
  std::sort(folders.rbegin(), folders.rend());  // the deepest first
  for (const fs::path& folder : folders)
    if (fs::is_empty(folder, error)) eraser.erase(folder);
}

// Deletes the blobs of `used` that no other snapshot still links to, and
// their partial downloads unless a download holds their lock.
void remove_unused_blobs(const CacheEraser& eraser, const fs::path& blobs, const fs::path& locks,
                         const std::set<std::string>& used, const std::set<std::string>& still_used,
                         SnapshotRemoval& removal) {
  std::error_code error;
  for (const std::string& name : used) {
    if (still_used.contains(name)) {
      ++removal.blobs_kept;
      continue;
    }
    const fs::path blob = blobs / name;
    if (fs::exists(fs::symlink_status(blob, error))) {
      removal.freed_bytes += eraser.erase(blob);
      ++removal.blobs_removed;
    }
    std::vector<fs::path> partials;
    for (fs::directory_iterator it(blobs, error), end; !error && it != end; it.increment(error))
      if (is_partial_of(it->path().filename().string(), name)) partials.push_back(it->path());
    for (const fs::path& partial : partials) {
      const DownloadLockProbe lock(locks / (name + ".lock"));
      if (!lock.busy()) removal.freed_bytes += eraser.erase(partial);
    }
  }
}

// Once no snapshot is left, the repository's folder and its lock folder go,
// with any blob no snapshot named any more (left by an interrupted removal);
// unless a download is writing into it: one of its locks is held, or the
// locks cannot be read.
void remove_repo_when_empty(const CacheEraser& eraser, const fs::path& repo_folder,
                            const fs::path& locks, SnapshotRemoval& removal) {
  std::error_code error;
  if (!fs::is_empty(repo_folder / "snapshots", error) || error) return;
  std::vector<DownloadLockProbe> held;
  if (fs::exists(fs::symlink_status(locks, error))) {
    eraser.require_own_folder(locks);
    for (fs::directory_iterator it(locks, error), end; !error && it != end; it.increment(error)) {
      held.emplace_back(it->path());
      if (held.back().busy()) return;
    }
    if (error) return;
  }
  const fs::path blobs = repo_folder / "blobs";
  if (is_own_folder(blobs)) {
    for (fs::directory_iterator it(blobs, error), end; !error && it != end; it.increment(error)) {
      std::error_code entry_error;
      if (!fs::is_regular_file(it->symlink_status(entry_error))) continue;
      removal.freed_bytes += CacheEraser::size_of(it->path());
      if (!it->path().filename().string().ends_with(".incomplete")) ++removal.blobs_removed;
    }
  }
  eraser.erase(repo_folder);
  eraser.erase(locks);
}

}  // namespace

SnapshotRemoval HubCache::remove_snapshot(std::string_view repo_id, std::string_view commit) const {
  // Both names are checked before anything on disk is looked at.
  const std::string folder_name = repo_folder_name(repo_id);
  if (!is_commit_hash(commit))
    throw HubProtocolError("\"" + std::string(commit) +
                           "\" is not a commit (40 hexadecimal digits); nothing was removed.");
  const std::string repo(repo_id);
  const std::string hash(commit);
  const fs::path repo_folder = root_ / folder_name;
  const fs::path snapshots = repo_folder / "snapshots";
  const fs::path snapshot = snapshots / hash;
  const fs::path blobs = repo_folder / "blobs";
  const fs::path locks = root_ / ".locks" / folder_name;

  std::error_code error;
  if (!fs::exists(fs::symlink_status(snapshot, error)))
    throw HubError(repo + " has no snapshot " + hash + " in the cache " + root_.string() + ".");
  const CacheEraser eraser(root_, repo);
  eraser.require_own_folder(repo_folder);
  eraser.require_own_folder(snapshots);
  eraser.require_own_folder(snapshot);
  if (fs::exists(fs::symlink_status(blobs, error))) eraser.require_own_folder(blobs);

  // What the snapshot links to, and what the others still do.
  SnapshotRemoval removal;
  // Without blobs/ (huggingface_hub's degraded mode) the snapshot holds
  // copies, which are counted all the same.
  const std::set<std::string> used = blobs_linked_from(snapshot, blobs, removal.freed_bytes);
  std::set<std::string> still_used;
  std::int64_t ignored = 0;
  for (fs::directory_iterator it(snapshots, error), end; !error && it != end; it.increment(error)) {
    if (it->path().filename() == hash || !is_own_folder(it->path())) continue;
    const std::set<std::string> other = blobs_linked_from(it->path(), blobs, ignored);
    still_used.insert(other.begin(), other.end());
  }
  if (error) throw HubError("Cannot read " + snapshots.string() + ": " + error.message() + ".");

  eraser.erase(snapshot);
  // Files that describe only this commit: huggingface_hub's markers of files
  // the commit lacks, and its cached file list.
  eraser.erase(repo_folder / ".no_exist" / hash);
  eraser.erase(repo_folder / "trees" / (hash + ".json"));
  remove_refs_naming(eraser, repo_folder / "refs", hash);
  remove_unused_blobs(eraser, blobs, locks, used, still_used, removal);
  remove_repo_when_empty(eraser, repo_folder, locks, removal);
  return removal;
}

}  // namespace quire::hub
