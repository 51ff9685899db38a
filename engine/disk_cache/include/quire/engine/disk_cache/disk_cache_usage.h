#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "quire/engine/disk_cache/model_identity.h"
#include "quire/engine/disk_cache/page_coding.h"

namespace quire::engine::disk_cache {

// The disk cache's root holds one folder per model, named by the model
// identity's hex (ModelIdentity::hex), and in it one folder per cache coding
// (PageCoding::key), each a DiskPageStore's folder:
//   <root>/<model identity>/<coding key>/<page hash>.page
// so that Quire processes running one model with different cache formats
// keep apart instead of refusing (and removing) each other's pages.
std::filesystem::path store_folder(const std::filesystem::path& root, const ModelIdentity& model,
                                   const PageCoding& coding);

struct ModelUsage {
  std::string model;  // the folder's name: the model identity in hex
  std::uint64_t bytes = 0;
  std::uint64_t pages = 0;
};

// What each model's pages take (every coding's folder together), by model
// folder name; folders of other names are left out. An absent root is an empty cache. Throws
// std::system_error naming the folder when it cannot be listed.
std::vector<ModelUsage> usage_by_model(const std::filesystem::path& root);

// Removes the page files of every coding folder of every model folder under
// `root`, each under its folder's lock, so a Quire process writing meanwhile stays consistent.
void clear_all_models(const std::filesystem::path& root);

}  // namespace quire::engine::disk_cache
