#pragma once

// Runs of a small model with the disk tier: a first "process" that computes
// a chat and archives its pages, a second that resumes it from disk, and the
// references they are compared with.

#include <QTemporaryDir>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "quire/engine/runtime/disk_tier.h"
#include "quire/engine/runtime/model_runtime.h"
#include "runtime_test_support.h"

namespace quire::test {

// Pages of 16 tokens in a cache of 1,024, prompts taken 48 at a time.
engine::RuntimeOptions disk_test_options(cache::CacheFormat format);
engine::DiskTierOptions disk_at(const std::filesystem::path& root);
std::filesystem::path path_of(const QTemporaryDir& dir);

// The first turn: 144 tokens, nine whole pages. The second: the first and 37 more.
std::vector<cache::TokenId> first_turn();
std::vector<cache::TokenId> second_turn();

struct ResumeRun {
  std::vector<float> logits;  // after the prompt's last token
  cache::CacheStats stats;
  engine::DiskTierStatus disk;
};

// A runtime with the tier under `root` prefills `tokens`, archives and ends.
engine::ArchiveResult compute_and_archive(std::shared_ptr<const engine::ModelDescription> model,
                                          const engine::RuntimeOptions& options,
                                          const engine::DiskTierOptions& disk,
                                          std::span<const cache::TokenId> tokens);
// A new runtime with the tier under `root` prefills `tokens`.
ResumeRun resume(std::shared_ptr<const engine::ModelDescription> model,
                 const engine::RuntimeOptions& options, const engine::DiskTierOptions& disk,
                 std::span<const cache::TokenId> tokens);
// One runtime, no disk tier: `first`, then `second` over the pages it left.
std::vector<float> warm_logits(std::shared_ptr<const engine::ModelDescription> model,
                               const engine::RuntimeOptions& options,
                               std::span<const cache::TokenId> first,
                               std::span<const cache::TokenId> second);

// The page files, and the temporaries, in a store folder.
std::vector<std::filesystem::path> page_files(const std::filesystem::path& folder);
std::vector<std::filesystem::path> temporaries(const std::filesystem::path& folder);
// The folder a tier under `disk` opens for the model and options.
std::filesystem::path store_folder_of(std::shared_ptr<const engine::ModelDescription> model,
                                      const engine::RuntimeOptions& options,
                                      const engine::DiskTierOptions& disk);

}  // namespace quire::test
