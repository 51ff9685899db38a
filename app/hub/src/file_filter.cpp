#include "quire/hub/file_filter.h"

#include <fnmatch.h>

namespace quire::hub {
namespace {

bool matches(const std::string& pattern, std::string_view path) {
  std::string glob = pattern;
  // huggingface_hub: "folder/" stands for "folder/*".
  if (glob.ends_with('/')) glob += '*';
  const std::string text(path);
  return ::fnmatch(glob.c_str(), text.c_str(), 0) == 0;
}

bool matches_any(const std::vector<std::string>& patterns, std::string_view path) {
  for (const std::string& pattern : patterns)
    if (matches(pattern, path)) return true;
  return false;
}

}  // namespace

bool FileFilter::accepts(std::string_view path) const {
  if (!include.empty() && !matches_any(include, path)) return false;
  return !matches_any(exclude, path);
}

}  // namespace quire::hub
