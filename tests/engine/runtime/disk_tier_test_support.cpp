#include "disk_tier_test_support.h"

#include <algorithm>

namespace quire::test {

namespace fs = std::filesystem;

engine::RuntimeOptions disk_test_options(cache::CacheFormat format) {
  engine::RuntimeOptions options;
  options.cache_format = format;
  options.cache_tokens = 1024;
  options.page_size = 16;
  options.max_chunk_tokens = 48;
  return options;
}

engine::DiskTierOptions disk_at(const fs::path& root) {
  engine::DiskTierOptions options;
  options.root = root;
  options.limit_bytes = std::uint64_t{256} << 20;
  return options;
}

fs::path path_of(const QTemporaryDir& dir) {
  return fs::path(dir.path().toStdString());
}

std::vector<cache::TokenId> first_turn() {
  return random_tokens(144, 512, 11);
}

std::vector<cache::TokenId> second_turn() {
  std::vector<cache::TokenId> tokens = first_turn();
  for (const cache::TokenId token : random_tokens(37, 512, 12))
    tokens.push_back(token);
  return tokens;
}

engine::ArchiveResult compute_and_archive(std::shared_ptr<const engine::ModelDescription> model,
                                          const engine::RuntimeOptions& options,
                                          const engine::DiskTierOptions& disk,
                                          std::span<const cache::TokenId> tokens) {
  kernels::CpuBackend backend;
  engine::ModelRuntime runtime(std::move(model), backend, options);
  runtime.open_disk_tier(disk);
  runtime.prefill(tokens, false);
  return runtime.archive_cache();
}

ResumeRun resume(std::shared_ptr<const engine::ModelDescription> model,
                 const engine::RuntimeOptions& options, const engine::DiskTierOptions& disk,
                 std::span<const cache::TokenId> tokens) {
  kernels::CpuBackend backend;
  engine::ModelRuntime runtime(std::move(model), backend, options);
  runtime.open_disk_tier(disk);
  ResumeRun run;
  run.logits = runtime.prefill(tokens, false).back();
  run.stats = runtime.cache().stats();
  run.disk = runtime.disk_tier()->status();
  return run;
}

std::vector<float> warm_logits(std::shared_ptr<const engine::ModelDescription> model,
                               const engine::RuntimeOptions& options,
                               std::span<const cache::TokenId> first,
                               std::span<const cache::TokenId> second) {
  kernels::CpuBackend backend;
  engine::ModelRuntime runtime(std::move(model), backend, options);
  runtime.prefill(first, false);
  return runtime.prefill(second, false).back();
}

namespace {

std::vector<fs::path> files_where(const fs::path& folder, bool temporary) {
  std::vector<fs::path> found;
  std::error_code error;
  for (fs::directory_iterator it(folder, error), end; !error && it != end; it.increment(error)) {
    const std::string name = it->path().filename().string();
    const bool is_temporary = name.starts_with(".tmp-");
    if (temporary ? is_temporary : it->path().extension() == ".page") found.push_back(it->path());
  }
  std::sort(found.begin(), found.end());
  return found;
}

}  // namespace

std::vector<fs::path> page_files(const fs::path& folder) {
  return files_where(folder, false);
}

std::vector<fs::path> temporaries(const fs::path& folder) {
  return files_where(folder, true);
}

fs::path store_folder_of(std::shared_ptr<const engine::ModelDescription> model,
                         const engine::RuntimeOptions& options,
                         const engine::DiskTierOptions& disk) {
  kernels::CpuBackend backend;
  engine::ModelRuntime runtime(std::move(model), backend, options);
  return runtime.open_disk_tier(disk).folder();
}

}  // namespace quire::test
