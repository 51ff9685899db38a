#pragma once

// The models already on this computer: the snapshots of the Hugging Face
// cache (whoever downloaded them: Quire, Python's or JavaScript's tools) and
// the folders under Quire's own models folder, for quire-cli models and the
// app's "Get models" page. Read from the disk alone, without the engine: a
// folder is a model when it holds config.json; whether Quire can run it is
// the engine's question.

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace quire::hub {

// A model folder found on disk: a snapshot of the HF cache (or a subfolder of one
// that holds its own config.json, as repositories keeping one quantization per folder do),
// or a folder under Quire's own models folder.
struct CachedModel {
  std::string repo;               // "org/name"; "" for a folder outside the HF cache
  std::string commit;             // the snapshot's commit; "" outside the HF cache
  std::vector<std::string> refs;  // refs/ entries naming this commit: "main", "4.0bpw" (sorted)
  // "" or the path inside the snapshot ("4.0bpw"); for list_model_folders,
  // the path inside its `root` ("" for `root` itself).
  std::string subfolder;
  std::filesystem::path folder;  // the model folder itself (holds config.json)
  // Its files' sizes, links followed, each blob counted once. Files of a
  // subfolder that is a model of its own are counted there, not here.
  std::int64_t bytes = 0;
  std::filesystem::file_time_type modified{};  // newest file's time
};

// Every model folder in the cache at `cache_root` (models--*/snapshots/*, and their subfolders
// with a config.json, up to two levels deep). Folders without config.json are not models;
// links leaving the cache are not followed or counted. Sorted by repo, then refs/commit.
//
// Snapshots named by a ref come before those no ref names; the subfolders of
// one snapshot follow it in name order. Folders that are links are not
// entered; repositories whose folder names no org/name (the Hub's old
// single-name models such as models--gpt2) are left out, as HubCache cannot
// address them. A cache that is missing or unreadable lists nothing.
std::vector<CachedModel> list_cached_models(const std::filesystem::path& cache_root);

// Every folder holding config.json under `root` (itself, or up to two levels down).
//
// Links are followed here (a model folder linked into Quire's models folder
// is a model like any other); sorted by folder. A missing `root` lists
// nothing.
std::vector<CachedModel> list_model_folders(const std::filesystem::path& root);

// What HubCache::remove_snapshot deleted.
struct SnapshotRemoval {
  // Blobs deleted, and files the snapshot held as copies rather than links
  // (HF_HUB_DISABLE_SYMLINKS).
  std::int64_t freed_bytes = 0;
  int blobs_removed = 0;
  int blobs_kept = 0;  // still used by another snapshot of the repository
};

}  // namespace quire::hub
