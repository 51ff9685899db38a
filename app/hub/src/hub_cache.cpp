#include "quire/hub/hub_cache.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>
#include <system_error>

#include "quire/hub/hub_error.h"

namespace quire::hub {
namespace fs = std::filesystem;
namespace {

bool is_hex(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) || (c >= 'a' && c <= 'f');
  });
}

bool is_valid_name_part(std::string_view part) {
  if (part.empty() || part.size() > 96) return false;
  if (part.find("..") != std::string_view::npos || part.find("--") != std::string_view::npos)
    return false;
  if (part.front() == '-' || part.front() == '.' || part.back() == '-' || part.back() == '.')
    return false;
  return std::all_of(part.begin(), part.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  });
}

// True when `inner`, made absolute and free of "." and "..", lies under `outer`.
bool lies_under(const fs::path& inner, const fs::path& outer) {
  const fs::path a = inner.lexically_normal();
  const fs::path b = outer.lexically_normal();
  auto ai = a.begin();
  for (auto bi = b.begin(); bi != b.end(); ++bi, ++ai) {
    if (bi->empty()) continue;  // the trailing "" of "dir/"
    if (ai == a.end() || *ai != *bi) return false;
  }
  return true;
}

void write_atomically(const fs::path& target, std::string_view content) {
  fs::create_directories(target.parent_path());
  fs::path temporary = target;
  temporary += ".tmp";
  {
    std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
    file.write(content.data(), static_cast<std::streamsize>(content.size()));
    if (!file) throw std::runtime_error("Cannot write " + temporary.string() + ".");
  }
  fs::rename(temporary, target);
}

}  // namespace

bool is_valid_repo_id(std::string_view repo_id) {
  const std::size_t slash = repo_id.find('/');
  if (slash == std::string_view::npos || repo_id.find('/', slash + 1) != std::string_view::npos)
    return false;
  return is_valid_name_part(repo_id.substr(0, slash)) &&
         is_valid_name_part(repo_id.substr(slash + 1));
}

bool is_commit_hash(std::string_view text) {
  return text.size() == 40 && is_hex(text);
}

bool is_valid_etag(std::string_view text) {
  return (text.size() == 40 || text.size() == 64) && is_hex(text);
}

fs::path checked_repo_path(std::string_view path) {
  const auto refuse = [&](const char* why) -> fs::path {
    throw HubProtocolError("The Hub named a file \"" + std::string(path) + "\", " + why +
                           "; it is not written.");
  };
  if (path.empty()) return refuse("an empty name");
  if (path.front() == '/') return refuse("an absolute path");
  if (std::any_of(path.begin(), path.end(), [](char c) {
        return c == '\\' || static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
      }))
    return refuse("with a backslash or control character");
  if (path.size() >= 2 && path[1] == ':') return refuse("with a drive letter");
  std::size_t start = 0;
  while (start <= path.size()) {
    const std::size_t slash = path.find('/', start);
    const std::string_view segment = path.substr(
        start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
    if (segment.empty()) return refuse("with an empty folder name");
    if (segment == "." || segment == "..") return refuse("that climbs out of its folder");
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return fs::path(std::string(path));
}

HubCache::HubCache(fs::path root, bool links) : root_(std::move(root)), links_(links) {}

std::string HubCache::repo_folder_name(std::string_view repo_id) {
  if (!is_valid_repo_id(repo_id))
    throw HubProtocolError("\"" + std::string(repo_id) +
                           "\" is not a repository name such as org/name.");
  std::string name = "models--";
  for (char c : repo_id) {
    if (c == '/')
      name += "--";
    else
      name += c;
  }
  return name;
}

fs::path HubCache::repo_dir(std::string_view repo_id) const {
  return root_ / repo_folder_name(repo_id);
}

fs::path HubCache::blob_path(std::string_view repo_id, std::string_view etag) const {
  if (!is_valid_etag(etag))
    throw HubProtocolError("The Hub gave the blob name \"" + std::string(etag) +
                           "\", which is neither a sha1 nor a sha256.");
  return repo_dir(repo_id) / "blobs" / std::string(etag);
}

fs::path HubCache::incomplete_path(std::string_view repo_id, std::string_view etag) const {
  fs::path path = blob_path(repo_id, etag);
  path += ".incomplete";
  return path;
}

fs::path HubCache::lock_path(std::string_view repo_id, std::string_view etag) const {
  blob_path(repo_id, etag);  // validates both names
  return root_ / ".locks" / repo_folder_name(repo_id) / (std::string(etag) + ".lock");
}

fs::path HubCache::snapshot_dir(std::string_view repo_id, std::string_view commit) const {
  if (!is_commit_hash(commit))
    throw HubProtocolError("The Hub gave the commit \"" + std::string(commit) +
                           "\", which is not 40 hexadecimal digits.");
  return repo_dir(repo_id) / "snapshots" / std::string(commit);
}

fs::path HubCache::snapshot_file(std::string_view repo_id, std::string_view commit,
                                 std::string_view path) const {
  return snapshot_dir(repo_id, commit) / checked_repo_path(path);
}

bool HubCache::has_blob(std::string_view repo_id, std::string_view etag) const {
  std::error_code error;
  return fs::is_regular_file(fs::symlink_status(blob_path(repo_id, etag), error));
}

std::optional<std::string> HubCache::read_ref(std::string_view repo_id,
                                              std::string_view ref) const {
  const fs::path path = repo_dir(repo_id) / "refs" / checked_repo_path(ref);
  std::ifstream file(path, std::ios::binary);
  if (!file) return std::nullopt;
  std::ostringstream text;
  text << file.rdbuf();
  std::string commit = text.str();
  while (!commit.empty() && std::isspace(static_cast<unsigned char>(commit.back())))
    commit.pop_back();
  if (!is_commit_hash(commit)) return std::nullopt;
  return commit;
}

void HubCache::write_ref(std::string_view repo_id, std::string_view ref,
                         std::string_view commit) const {
  if (!is_commit_hash(commit))
    throw HubProtocolError("The Hub gave the commit \"" + std::string(commit) +
                           "\", which is not 40 hexadecimal digits.");
  write_atomically(repo_dir(repo_id) / "refs" / checked_repo_path(ref), commit);
}

void HubCache::commit_blob(std::string_view repo_id, std::string_view etag,
                           const fs::path& finished_file) const {
  const fs::path blob = blob_path(repo_id, etag);
  fs::create_directories(blob.parent_path());
  if (has_blob(repo_id, etag)) {
    fs::remove(finished_file);
    return;
  }
  fs::rename(finished_file, blob);
}

Placement HubCache::place_in_snapshot(std::string_view repo_id, std::string_view commit,
                                      std::string_view path, std::string_view etag) const {
  const fs::path blob = blob_path(repo_id, etag);
  const fs::path relative = checked_repo_path(path);
  const fs::path snapshot = snapshot_dir(repo_id, commit);
  const fs::path target = snapshot / relative;

  // A folder on the way that is a link could lead the file out of the cache.
  fs::path folder = snapshot;
  for (const fs::path& part : relative.parent_path()) {
    folder /= part;
    if (fs::is_symlink(fs::symlink_status(folder)))
      throw HubProtocolError("The snapshot folder " + folder.string() +
                             " is a link; the file is not written through it.");
  }
  fs::create_directories(target.parent_path());

  // snapshots/<commit>/a/b.bin -> ../../../blobs/<etag>
  fs::path link;
  const auto depth = std::distance(relative.begin(), relative.end()) + 1;
  for (std::ptrdiff_t i = 0; i < depth; ++i)
    link /= "..";
  link = link / "blobs" / std::string(etag);

  std::error_code error;
  const fs::file_status existing = fs::symlink_status(target, error);
  if (fs::is_symlink(existing) && fs::read_symlink(target, error) == link) return Placement::Linked;
  if (fs::exists(existing)) {
    if (fs::is_directory(existing))
      throw HubProtocolError("The snapshot holds a folder where the file " + std::string(path) +
                             " belongs.");
    fs::remove(target);
  }
  if (links_) {
    fs::create_symlink(link, target, error);
    if (!error) return Placement::Linked;
  }
  // File systems without links (FAT, some network shares): a copy, as
  // huggingface_hub's degraded mode does.
  fs::copy_file(blob, target, fs::copy_options::overwrite_existing);
  return Placement::Copied;
}

std::optional<fs::path> HubCache::find_snapshot(std::string_view repo_id,
                                                std::string_view revision) const {
  std::string commit(revision);
  if (!is_commit_hash(revision)) {
    const std::optional<std::string> ref = read_ref(repo_id, revision);
    if (!ref) return std::nullopt;
    commit = *ref;
  }
  const fs::path folder = snapshot_dir(repo_id, commit);
  std::error_code error;
  if (!fs::is_directory(fs::symlink_status(folder, error))) return std::nullopt;
  return folder;
}

bool HubCache::stays_inside(const fs::path& file) const {
  std::error_code error;
  const fs::path root = fs::weakly_canonical(root_, error);
  if (error) return false;
  // Links are followed one by one, so that a link to a place that does not
  // exist (which weakly_canonical would keep as it is) is judged by its target.
  fs::path current = fs::absolute(file, error);
  for (int hops = 0; hops < 40; ++hops) {
    current = fs::weakly_canonical(current.parent_path(), error) / current.filename();
    if (error) return false;
    if (!fs::is_symlink(fs::symlink_status(current, error))) return lies_under(current, root);
    const fs::path target = fs::read_symlink(current, error);
    if (error) return false;
    current = target.is_absolute() ? target : current.parent_path() / target;
  }
  return false;  // a loop of links
}

}  // namespace quire::hub
