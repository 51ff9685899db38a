#pragma once

// The Hub's JSON answers as typed values: search results (/api/models),
// repository info (/api/models/{repo}[/revision/{rev}]?blobs=true), branches
// and tags (/refs) and file trees (/tree/{rev}). Parsed once, here, so that
// the client and the interface pass plain values. Malformed answers throw
// HubProtocolError; fields the Hub may leave out get their defaults.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace quire::hub {

struct LfsPointer {
  std::string sha256;  // 64 hex digits: the blob's name in the cache
  std::int64_t size = 0;
};

struct RepoFile {
  std::string path;        // "rfilename": relative to the repository's root
  std::int64_t size = -1;  // -1 when the answer had no sizes (no ?blobs=true)
  std::string blob_id;     // git blob sha1
  std::optional<LfsPointer> lfs;

  // The name of the file's blob in the cache: sha256 for LFS files, the git
  // sha1 otherwise (as the Hub's X-Linked-Etag / ETag gives it).
  const std::string& etag() const { return lfs ? lfs->sha256 : blob_id; }
};

struct ModelSummary {
  std::string id;  // "org/name"
  std::string author;
  std::int64_t downloads = 0;
  std::int64_t likes = 0;
  std::string last_modified;
  std::string pipeline_tag;
  std::string library_name;
  std::vector<std::string> tags;
  std::string gated;  // "" when open, else "auto", "manual" or "true"
  bool is_private = false;
};

struct ModelInfo {
  ModelSummary summary;
  std::string sha;  // the commit the revision resolved to
  std::vector<RepoFile> files;
};

struct GitRef {
  std::string name;  // "main", "3.0bpw"
  std::string ref;   // "refs/heads/main"
  std::string target_commit;
};

struct RepoRefs {
  std::vector<GitRef> branches;
  std::vector<GitRef> tags;
  std::vector<GitRef> converts;
};

struct TreeEntry {
  bool is_directory = false;
  std::string path;
  std::string oid;  // git sha1
  std::int64_t size = 0;
  std::optional<LfsPointer> lfs;  // from "lfs.oid" (tree) rather than "lfs.sha256" (siblings)
};

std::vector<ModelSummary> parse_model_list(std::string_view json_text);
ModelInfo parse_model_info(std::string_view json_text);
RepoRefs parse_refs(std::string_view json_text);
std::vector<TreeEntry> parse_tree(std::string_view json_text);

// The message the Hub put in an error body ({"error": "..."}), or "" when
// the body is not such an object.
std::string error_message_of(std::string_view body);

}  // namespace quire::hub
