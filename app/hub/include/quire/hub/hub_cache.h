#pragma once

// The Hugging Face cache layout, as the Hub documents it for every language
// (https://huggingface.co/docs/hub/local-cache), so that a model downloaded
// by Python's or JavaScript's tools opens in Quire and the other way round:
//
//   <root>/models--org--name/blobs/<etag>           the files' bytes
//   <root>/models--org--name/blobs/<etag>.incomplete a partial download
//   <root>/models--org--name/snapshots/<commit>/<path>  relative links to blobs
//   <root>/models--org--name/refs/<branch>          the commit, no newline
//   <root>/.locks/models--org--name/<etag>.lock     flock()ed while writing
//
// Every name that comes from the Hub (repository, path, ref, etag) is checked
// here before it touches the disk: "..", absolute paths and links that leave
// the cache are refused with HubProtocolError.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "quire/hub/cached_models.h"

namespace quire::hub {

// "org/name": letters, digits, '.', '_' and '-' in each half, no ".." or "--"
// at either end (huggingface_hub's validate_repo_id).
bool is_valid_repo_id(std::string_view repo_id);
// 40 hexadecimal digits.
bool is_commit_hash(std::string_view text);
// A git sha1 (40 hex) or an LFS sha256 (64 hex).
bool is_valid_etag(std::string_view text);

// A path inside a repository as a relative path that stays inside its folder;
// throws HubProtocolError for "", absolute paths, "..", "." or empty
// segments, backslashes and control characters.
std::filesystem::path checked_repo_path(std::string_view path);

// How a file was put into a snapshot.
enum class Placement { Linked, Copied };

class HubCache {
 public:
  // With `links` false (HF_HUB_DISABLE_SYMLINKS), snapshots hold copies.
  explicit HubCache(std::filesystem::path root, bool links = true);

  const std::filesystem::path& root() const { return root_; }

  // models--org--name (case kept)
  static std::string repo_folder_name(std::string_view repo_id);

  std::filesystem::path repo_dir(std::string_view repo_id) const;
  std::filesystem::path blob_path(std::string_view repo_id, std::string_view etag) const;
  std::filesystem::path incomplete_path(std::string_view repo_id, std::string_view etag) const;
  std::filesystem::path lock_path(std::string_view repo_id, std::string_view etag) const;
  std::filesystem::path snapshot_dir(std::string_view repo_id, std::string_view commit) const;
  std::filesystem::path snapshot_file(std::string_view repo_id, std::string_view commit,
                                      std::string_view path) const;

  bool has_blob(std::string_view repo_id, std::string_view etag) const;

  // refs/<ref>: the commit it points at, nullopt when absent or not a commit.
  std::optional<std::string> read_ref(std::string_view repo_id, std::string_view ref) const;
  // Writes through a temporary file and a rename, as huggingface_hub does.
  void write_ref(std::string_view repo_id, std::string_view ref, std::string_view commit) const;

  // Moves a finished download into blobs/<etag> (replacing nothing that is
  // already there: the first finished copy wins).
  void commit_blob(std::string_view repo_id, std::string_view etag,
                   const std::filesystem::path& finished_file) const;

  // Makes snapshots/<commit>/<path> a relative link to blobs/<etag>; a copy
  // where the file system refuses links or links are turned off. An entry already there is kept
  // when it is that blob, and replaced otherwise.
  Placement place_in_snapshot(std::string_view repo_id, std::string_view commit,
                              std::string_view path, std::string_view etag) const;

  // The snapshot folder of `revision` (a commit, or a ref under refs/), when
  // it is in the cache.
  std::optional<std::filesystem::path> find_snapshot(std::string_view repo_id,
                                                     std::string_view revision) const;

  // True when `file` (in a snapshot) is a regular file, or a link whose
  // target, followed to the end, stays inside the cache's root.
  bool stays_inside(const std::filesystem::path& file) const;

  // Deletes snapshots/<commit>, the refs naming it, the blobs no other
  // snapshot of the repository links to (and their partial downloads, unless
  // a download holds their lock), and the repository's folders once no
  // snapshot is left and nothing in it is being downloaded
  // (snapshot_removal.cpp). Throws HubProtocolError for a bad name before
  // touching the disk, HubError when the snapshot is not there or cannot be
  // deleted; nothing outside the cache's root is deleted, and no link is
  // followed to delete what it leads to.
  SnapshotRemoval remove_snapshot(std::string_view repo_id, std::string_view commit) const;

 private:
  std::filesystem::path root_;
  bool links_ = true;
};

}  // namespace quire::hub
