#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace quire::engine::disk_cache {

// The disk cache's root holds one folder per model, named by the model
// identity's hex (ModelIdentity::hex), each a DiskPageStore's folder:
//   <root>/<model identity>/<page hash>.page
struct ModelUsage {
  std::string model;  // the folder's name: the model identity in hex
  std::uint64_t bytes = 0;
  std::uint64_t pages = 0;
};

// What each model's pages take, by model folder name; folders of other names
// are left out. An absent root is an empty cache. Throws std::system_error
// naming the folder when it cannot be listed.
std::vector<ModelUsage> usage_by_model(const std::filesystem::path& root);

// Removes the page files of every model folder under `root`, each under its
// folder's lock, so a Quire process writing meanwhile stays consistent.
void clear_all_models(const std::filesystem::path& root);

}  // namespace quire::engine::disk_cache
