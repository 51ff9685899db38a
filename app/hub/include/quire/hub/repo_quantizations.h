#pragma once

// The quantizations a repository offers, whichever way it keeps them: a
// branch per bits-per-weight (turboderp's and bartowski's EXL2 and EXL3
// repositories, whose main branch holds only a README), a folder per
// quantization in one branch, or one model in the branch's root. A
// quantization is a folder holding config.json; its files are those below
// it, less those of quantizations nested in it.

#include <cstdint>
#include <string>
#include <vector>

#include "quire/hub/file_filter.h"
#include "quire/hub/hub_models.h"

namespace quire::hub {

struct Quantization {
  std::string revision;   // the branch (or tag) it was found on
  std::string commit;     // what that revision pointed at
  std::string subfolder;  // "" for the revision's root, else "4.0bpw" or "exl3/4.0bpw"
  std::int64_t bytes = 0;
  std::vector<RepoFile> files;  // paths from the repository's root

  // "4.0bpw" (a branch), "main" (the root of main), "main: 4.0bpw" (a folder).
  std::string label() const;
  // Accepts exactly this quantization's files.
  FileFilter filter() const;
  // A key that names it within its repository: "revision" or "revision/subfolder".
  std::string key() const;
};

// Folders deeper than this are not searched for a config.json.
inline constexpr int kMaxQuantizationDepth = 2;

// The quantizations of one revision's file list, root first, then folders by name.
std::vector<Quantization> quantizations_in(const std::string& revision, const ModelInfo& info);

// Orders branches as people read them: main first, then by the numbers in
// their names ("2.5bpw" before "10.0bpw"), then by name.
bool revision_before(const std::string& a, const std::string& b);

// A glob that matches `path` only (fnmatch's special characters escaped).
std::string exact_glob(const std::string& path);

}  // namespace quire::hub
