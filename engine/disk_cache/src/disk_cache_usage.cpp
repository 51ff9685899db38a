#include "quire/engine/disk_cache/disk_cache_usage.h"

#include <algorithm>
#include <system_error>

#include "store_folder.h"

namespace quire::engine::disk_cache {
namespace {

// Model folders under the root, by name; nothing when the root is absent.
std::vector<std::string> model_folders(const std::filesystem::path& root) {
  std::vector<std::string> names;
  std::error_code error;
  if (!std::filesystem::exists(root, error)) return names;
  for (std::filesystem::directory_iterator it(root, error), end; !error && it != end;
       it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (it->is_directory(error) && parse_page_hash(name)) names.push_back(name);
  }
  if (error)
    throw std::system_error(error, "disk cache: " + root.string() + ": cannot list the folder");
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

std::vector<ModelUsage> usage_by_model(const std::filesystem::path& root) {
  std::vector<ModelUsage> usage;
  for (const std::string& name : model_folders(root)) {
    const StoreFolder folder(root / name);
    const auto entries = folder.scan();
    usage.push_back(ModelUsage{name, folder.bytes_of(entries), entries.size()});
  }
  return usage;
}

void clear_all_models(const std::filesystem::path& root) {
  for (const std::string& name : model_folders(root)) {
    const StoreFolder folder(root / name);
    const StoreFolder::Lock lock = folder.lock();
    folder.remove_all_pages();
  }
}

}  // namespace quire::engine::disk_cache
