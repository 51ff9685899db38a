#include "quire/hub/repo_quantizations.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

namespace quire::hub {
namespace {

// The folder of `path` ("" at the root).
std::string folder_of(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

int depth_of(const std::string& folder) {
  if (folder.empty()) return 0;
  return 1 + static_cast<int>(std::count(folder.begin(), folder.end(), '/'));
}

bool is_below(const std::string& path, const std::string& folder) {
  return folder.empty() ||
         (path.size() > folder.size() && path.starts_with(folder) && path[folder.size()] == '/');
}

// Splits a name into text and number runs for the natural order.
std::vector<std::pair<std::string, double>> natural_parts(const std::string& name) {
  std::vector<std::pair<std::string, double>> parts;
  std::size_t i = 0;
  while (i < name.size()) {
    if (std::isdigit(static_cast<unsigned char>(name[i]))) {
      std::size_t end = i;
      while (end < name.size() &&
             (std::isdigit(static_cast<unsigned char>(name[end])) || name[end] == '.'))
        ++end;
      double value = 0;
      try {
        value = std::stod(name.substr(i, end - i));
      } catch (const std::exception&) {
      }
      parts.emplace_back(std::string(), value);
      i = end;
    } else {
      std::size_t end = i;
      while (end < name.size() && !std::isdigit(static_cast<unsigned char>(name[end])))
        ++end;
      parts.emplace_back(name.substr(i, end - i), 0.0);
      i = end;
    }
  }
  return parts;
}

}  // namespace

std::string Quantization::label() const {
  if (subfolder.empty()) return revision;
  return revision + ": " + subfolder;
}

std::string Quantization::key() const {
  return subfolder.empty() ? revision : revision + "/" + subfolder;
}

std::string exact_glob(const std::string& path) {
  std::string glob;
  for (char c : path) {
    if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') glob += '\\';
    glob += c;
  }
  return glob;
}

FileFilter Quantization::filter() const {
  FileFilter filter;
  for (const RepoFile& file : files)
    filter.include.push_back(exact_glob(file.path));
  return filter;
}

bool revision_before(const std::string& a, const std::string& b) {
  if (a == b) return false;
  if (a == "main") return true;
  if (b == "main") return false;
  const auto left = natural_parts(a);
  const auto right = natural_parts(b);
  for (std::size_t i = 0; i < std::min(left.size(), right.size()); ++i) {
    if (left[i].first != right[i].first) return left[i].first < right[i].first;
    if (left[i].second != right[i].second) return left[i].second < right[i].second;
  }
  if (left.size() != right.size()) return left.size() < right.size();
  return a < b;
}

std::vector<Quantization> quantizations_in(const std::string& revision, const ModelInfo& info) {
  // The folders with a config.json are the quantizations.
  std::set<std::string> roots;
  for (const RepoFile& file : info.files) {
    const std::string folder = folder_of(file.path);
    const std::string name = folder.empty() ? file.path : file.path.substr(folder.size() + 1);
    if (name == "config.json" && depth_of(folder) <= kMaxQuantizationDepth) roots.insert(folder);
  }
  std::map<std::string, Quantization> found;
  for (const std::string& root : roots) {
    Quantization quantization;
    quantization.revision = revision;
    quantization.commit = info.sha;
    quantization.subfolder = root;
    found.emplace(root, std::move(quantization));
  }
  // Each file belongs to the deepest quantization folder above it.
  for (const RepoFile& file : info.files) {
    const std::string* owner = nullptr;
    for (const std::string& root : roots)
      if (is_below(file.path, root) && (owner == nullptr || root.size() > owner->size()))
        owner = &root;
    if (owner == nullptr) continue;
    Quantization& quantization = found.at(*owner);
    quantization.files.push_back(file);
    quantization.bytes += std::max<std::int64_t>(0, file.size);
  }
  std::vector<Quantization> result;
  for (auto& [root, quantization] : found)
    result.push_back(std::move(quantization));
  return result;
}

}  // namespace quire::hub
