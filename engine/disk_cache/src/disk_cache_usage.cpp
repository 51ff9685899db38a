#include "quire/engine/disk_cache/disk_cache_usage.h"

#include <algorithm>
#include <system_error>

#include "store_folder.h"

namespace quire::engine::disk_cache {
namespace {

// Subfolders of `folder` whose names `keep` accepts, sorted; nothing when
// the folder is absent.
template <typename Keep>
std::vector<std::string> subfolders(const std::filesystem::path& folder, Keep keep) {
  std::vector<std::string> names;
  std::error_code error;
  if (!std::filesystem::exists(folder, error)) return names;
  for (std::filesystem::directory_iterator it(folder, error), end; !error && it != end;
       it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (it->is_directory(error) && keep(name)) names.push_back(name);
  }
  if (error)
    throw std::system_error(error, "disk cache: " + folder.string() + ": cannot list the folder");
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> model_folders(const std::filesystem::path& root) {
  return subfolders(root,
                    [](const std::string& name) { return parse_page_hash(name).has_value(); });
}

// A model folder's coding folders (names do not start with a dot).
std::vector<std::string> coding_folders(const std::filesystem::path& model) {
  return subfolders(model, [](const std::string& name) { return !name.starts_with('.'); });
}

}  // namespace

std::filesystem::path store_folder(const std::filesystem::path& root, const ModelIdentity& model,
                                   const PageCoding& coding) {
  return root / model.hex() / coding.key();
}

std::vector<ModelUsage> usage_by_model(const std::filesystem::path& root) {
  std::vector<ModelUsage> usage;
  for (const std::string& name : model_folders(root)) {
    ModelUsage model{name, 0, 0};
    for (const std::string& coding : coding_folders(root / name)) {
      const StoreFolder folder(root / name / coding);
      const auto entries = folder.scan();
      model.bytes += folder.bytes_of(entries);
      model.pages += entries.size();
    }
    usage.push_back(model);
  }
  return usage;
}

void clear_all_models(const std::filesystem::path& root) {
  for (const std::string& name : model_folders(root)) {
    for (const std::string& coding : coding_folders(root / name)) {
      const StoreFolder folder(root / name / coding);
      const StoreFolder::Lock lock = folder.lock();
      folder.remove_all_pages();
    }
  }
}

}  // namespace quire::engine::disk_cache
