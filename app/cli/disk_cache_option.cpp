#include "disk_cache_option.h"

#include <CLI/CLI.hpp>
#include <exception>
#include <ostream>
#include <stdexcept>
#include <system_error>

#include "cli_support.h"
#include "disk_cache_size.h"
#include "quire/engine/model_error.h"

namespace quire::cli {

void DiskCacheOptions::add_to(CLI::App& command) {
  command
      .add_option("--disk-cache", folder,
                  "Keep the KV cache's pages in this folder (created if missing) as well, so "
                  "that a conversation resumes after a restart without computing its prompt "
                  "again; pages are written as they leave memory and when the command ends")
      ->type_name("DIR");
  command
      .add_option("--disk-cache-size", size,
                  "Most bytes the disk cache may take, every model's pages together, the least "
                  "recently used removed first: bytes, or with K, M, G or T (512M, 8G, 8GiB; "
                  "default 4GiB)")
      ->type_name("SIZE");
}

std::optional<engine::DiskTierOptions> DiskCacheOptions::tier_options() const {
  if (folder.empty()) {
    if (!size.empty()) {
      throw UsageError(
          "--disk-cache-size needs --disk-cache DIR, the folder that keeps the cache's pages");
    }
    return std::nullopt;
  }
  engine::DiskTierOptions options;
  options.root = folder;
  if (!size.empty()) {
    try {
      options.limit_bytes = parse_byte_size(size);
    } catch (const std::invalid_argument& error) {
      throw UsageError(std::string("--disk-cache-size ") + error.what());
    }
  }
  return options;
}

namespace {

// The tier's own messages begin with "disk cache: "; the line says it once.
std::string without_prefix(std::string text) {
  constexpr std::string_view prefix = "disk cache: ";
  if (text.starts_with(prefix)) text.erase(0, prefix.size());
  return text;
}

}  // namespace

bool open_disk_cache(engine::ModelRuntime& runtime, const engine::DiskTierOptions& options,
                     std::ostream& err) {
  try {
    runtime.open_disk_tier(options);
    return true;
  } catch (const std::system_error& error) {
    err << "quire-cli: going on without the disk cache: " << without_prefix(error.what()) << '\n';
  } catch (const std::invalid_argument& error) {
    err << "quire-cli: going on without the disk cache: " << without_prefix(error.what()) << '\n';
  } catch (const engine::ModelError& error) {
    err << "quire-cli: going on without the disk cache: " << without_prefix(error.what()) << '\n';
  }
  return false;
}

std::uint64_t archive_disk_cache(engine::ModelRuntime& runtime, std::ostream& err) {
  const engine::DiskTier* tier = runtime.disk_tier();
  if (tier == nullptr) return 0;
  engine::ArchiveResult result;
  try {
    result = runtime.archive_cache();
  } catch (const std::exception& error) {
    // The reply is done; only the next start's head start is lost.
    err << "disk cache: the pages could not be written: " << error.what() << '\n';
    return 0;
  }
  if (result.written > 0) {
    err << "disk cache: " << result.written << (result.written == 1 ? " page" : " pages")
        << " written to " << tier->folder().string() << '\n';
  }
  if (!result.error.empty()) {
    err << "disk cache: " << result.left_out << (result.left_out == 1 ? " page" : " pages")
        << " not written: " << without_prefix(result.error) << '\n';
  }
  return result.written;
}

std::string disk_tokens_note(const engine::ModelRuntime& runtime,
                             const engine::JobStatistics& statistics) {
  if (runtime.disk_tier() == nullptr) return {};
  return " (" + std::to_string(statistics.disk_tokens) + " from disk)";
}

}  // namespace quire::cli
