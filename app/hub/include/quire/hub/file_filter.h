#pragma once

// --include / --exclude: shell globs over a repository's paths, matched as
// huggingface_hub's allow_patterns / ignore_patterns are (fnmatch, where '*'
// also crosses '/'; a pattern ending in '/' means everything below it).

#include <string>
#include <string_view>
#include <vector>

namespace quire::hub {

struct FileFilter {
  std::vector<std::string> include;  // empty: every file
  std::vector<std::string> exclude;

  bool accepts(std::string_view path) const;
};

}  // namespace quire::hub
