#include "store_folder.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <queue>
#include <system_error>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "quire/engine/disk_cache/page_file.h"

namespace quire::engine::disk_cache {
namespace {

constexpr std::string_view kPageSuffix = ".page";
constexpr std::string_view kTemporaryPrefix = ".tmp-";

[[noreturn]] void throw_folder_error(int err, const std::filesystem::path& path, const char* what) {
  throw std::system_error(err, std::generic_category(),
                          "disk cache: " + path.string() + ": " + what);
}

void make_private_folders(const std::filesystem::path& folder) {
  if (folder.empty()) return;
  struct stat st {};
  if (::stat(folder.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) throw_folder_error(ENOTDIR, folder, "is not a folder");
    return;
  }
  if (folder.has_parent_path() && folder.parent_path() != folder)
    make_private_folders(folder.parent_path());
  if (::mkdir(folder.c_str(), 0700) != 0 && errno != EEXIST)
    throw_folder_error(errno, folder, "cannot create the folder");
}

// Calls f(name) for every entry of the folder.
template <typename F>
void for_each_name(const std::filesystem::path& folder, F&& f) {
  DIR* dir = ::opendir(folder.c_str());
  if (dir == nullptr) throw_folder_error(errno, folder, "cannot list the folder");
  std::vector<std::string> names;
  while (const dirent* entry = ::readdir(dir))
    names.emplace_back(entry->d_name);
  ::closedir(dir);
  for (const std::string& name : names)
    f(name);
}

std::optional<cache::PageHash> page_name_hash(std::string_view name) {
  if (name.size() != 32 + kPageSuffix.size() || !name.ends_with(kPageSuffix)) return std::nullopt;
  return parse_page_hash(name.substr(0, 32));
}

}  // namespace

std::optional<cache::PageHash> parse_page_hash(std::string_view hex) {
  if (hex.size() != 32) return std::nullopt;
  cache::PageHash hash;
  for (std::size_t i = 0; i < 32; ++i) {
    const char c = hex[i];
    int digit = 0;
    if (c >= '0' && c <= '9')
      digit = c - '0';
    else if (c >= 'a' && c <= 'f')
      digit = c - 'a' + 10;
    else
      return std::nullopt;
    hash.bytes[i / 2] =
        static_cast<std::uint8_t>(hash.bytes[i / 2] | (digit << (i % 2 == 0 ? 4 : 0)));
  }
  return hash;
}

StoreFolder::Lock::Lock(const std::filesystem::path& file) {
  fd_ = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd_ < 0) throw_folder_error(errno, file, "cannot open the lock file");
  while (::flock(fd_, LOCK_EX) != 0) {
    if (errno == EINTR) continue;
    const int err = errno;
    ::close(fd_);
    throw_folder_error(err, file, "cannot lock the folder");
  }
}

StoreFolder::Lock::~Lock() {
  ::close(fd_);
}  // closing releases the flock

StoreFolder::StoreFolder(std::filesystem::path folder) : folder_(std::move(folder)) {
  make_private_folders(folder_);
}

std::filesystem::path StoreFolder::page_path(const cache::PageHash& hash) const {
  return folder_ / (hash.hex() + std::string(kPageSuffix));
}

std::filesystem::path StoreFolder::temporary_path(const cache::PageHash& hash,
                                                  std::uint64_t counter) const {
  return folder_ / (std::string(kTemporaryPrefix) + hash.hex() + "-" + std::to_string(::getpid()) +
                    "-" + std::to_string(counter));
}

std::optional<cache::PageHash> StoreFolder::parent_of(const std::string& name, ino_t inode) const {
  {
    const std::lock_guard lock(mutex_);
    const auto it = parents_.find(name);
    if (it != parents_.end() && it->second.first == inode) return it->second.second;
  }
  std::optional<cache::PageHash> parent;
  const int fd = ::open((folder_ / name).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    std::byte fixed[kPageFileFixedHeader];
    const ssize_t got = ::pread(fd, fixed, sizeof fixed, 0);
    struct stat st {};
    if (got == static_cast<ssize_t>(sizeof fixed) && ::fstat(fd, &st) == 0) {
      // The whole header is parsed, so only a page that names a parent in a
      // well-formed header is kept as some page's child.
      const std::uint64_t header_bytes = page_header_bytes(fixed);
      std::vector<std::byte> prefix(header_bytes);
      PageFileHeader header;
      if (header_bytes > 0 &&
          ::pread(fd, prefix.data(), prefix.size(), 0) == static_cast<ssize_t>(prefix.size()) &&
          parse_page_header(prefix, static_cast<std::uint64_t>(st.st_size), header))
        parent = header.parent;
    }
    ::close(fd);
  }
  const std::lock_guard lock(mutex_);
  parents_[name] = {inode, parent};
  return parent;
}

std::vector<StoreFolder::PageEntry> StoreFolder::scan() const {
  std::vector<PageEntry> entries;
  for_each_name(folder_, [&](const std::string& name) {
    const auto hash = page_name_hash(name);
    if (!hash) return;
    struct stat st {};
    if (::lstat((folder_ / name).c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return;
    PageEntry entry;
    entry.hash = *hash;
    entry.parent = parent_of(name, st.st_ino);
    entry.bytes = static_cast<std::uint64_t>(st.st_size);
    entry.mtime_ns = std::int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec;
    entries.push_back(entry);
  });
  // Forget the parents of files that are gone.
  std::unordered_set<cache::PageHash, cache::PageHashHasher> present;
  for (const PageEntry& entry : entries)
    present.insert(entry.hash);
  const std::lock_guard lock(mutex_);
  std::erase_if(parents_, [&](const auto& known) {
    const auto hash = page_name_hash(known.first);
    return !hash || !present.contains(*hash);
  });
  return entries;
}

std::uint64_t StoreFolder::bytes_of(const std::vector<PageEntry>& entries) const {
  std::uint64_t total = 0;
  for (const PageEntry& entry : entries)
    total += entry.bytes;
  return total;
}

std::size_t StoreFolder::remove_dead_temporaries() const {
  std::size_t removed = 0;
  for_each_name(folder_, [&](const std::string& name) {
    if (!name.starts_with(kTemporaryPrefix)) return;
    const std::filesystem::path path = folder_ / name;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return;  // renamed or removed meanwhile
    // A living writer holds the flock until it has renamed or removed the file.
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0 && ::unlink(path.c_str()) == 0) ++removed;
    ::close(fd);
  });
  return removed;
}

std::size_t StoreFolder::evict_to(std::uint64_t limit) const {
  const std::vector<PageEntry> entries = scan();
  std::uint64_t total = bytes_of(entries);
  if (total <= limit) return 0;
  std::unordered_map<cache::PageHash, std::size_t, cache::PageHashHasher> by_hash;
  for (std::size_t i = 0; i < entries.size(); ++i)
    by_hash.emplace(entries[i].hash, i);
  std::vector<int> children(entries.size(), 0);
  for (const PageEntry& entry : entries) {
    if (!entry.parent || *entry.parent == entry.hash) continue;
    const auto parent = by_hash.find(*entry.parent);
    if (parent != by_hash.end()) ++children[parent->second];
  }
  // Orphans first (a page whose parent is gone can never be restored: a
  // restore walks a chain from its first page), then oldest first; equal
  // times by hash, so the order is the same in every process.
  using Candidate = std::tuple<bool, std::int64_t, cache::PageHash, std::size_t>;
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> leaves;
  const auto candidate = [&](std::size_t i) {
    const bool orphan = entries[i].parent && *entries[i].parent != entries[i].hash &&
                        !by_hash.contains(*entries[i].parent);
    return Candidate{!orphan, entries[i].mtime_ns, entries[i].hash, i};
  };
  for (std::size_t i = 0; i < entries.size(); ++i)
    if (children[i] == 0) leaves.push(candidate(i));
  std::size_t removed = 0;
  std::vector<bool> gone(entries.size(), false);
  const auto remove_entry = [&](std::size_t i) {
    // Another process may have removed it first; either way its bytes are gone.
    if (::unlink(page_path(entries[i].hash).c_str()) == 0) ++removed;
    total -= entries[i].bytes;
    gone[i] = true;
  };
  while (total > limit && !leaves.empty()) {
    const std::size_t i = std::get<3>(leaves.top());
    leaves.pop();
    const PageEntry& entry = entries[i];
    remove_entry(i);
    if (entry.parent && *entry.parent != entry.hash) {
      const auto parent = by_hash.find(*entry.parent);
      if (parent != by_hash.end() && --children[parent->second] == 0)
        leaves.push(candidate(parent->second));
    }
  }
  // Only pages whose parents form a loop (damaged or hostile headers) are
  // left without a leaf; they go oldest first.
  if (total > limit) {
    std::vector<std::size_t> rest;
    for (std::size_t i = 0; i < entries.size(); ++i)
      if (!gone[i]) rest.push_back(i);
    std::sort(rest.begin(), rest.end(), [&](std::size_t a, std::size_t b) {
      return std::tie(entries[a].mtime_ns, entries[a].hash) <
             std::tie(entries[b].mtime_ns, entries[b].hash);
    });
    for (const std::size_t i : rest) {
      if (total <= limit) break;
      remove_entry(i);
    }
  }
  return removed;
}

void StoreFolder::remove_all_pages() const {
  for (const PageEntry& entry : scan())
    ::unlink(page_path(entry.hash).c_str());
}

}  // namespace quire::engine::disk_cache
