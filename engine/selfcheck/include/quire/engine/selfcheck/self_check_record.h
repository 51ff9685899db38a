#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "quire/kernels/backend.h"

namespace quire::engine::selfcheck {

// Everything whose change must trigger the check again: Quire's version, the
// backend library file, the backend's own version (the CUDA runtime and the
// driver), and the devices (names and architectures).
struct SelfCheckKey {
  std::string quire_version;
  std::string backend;               // Backend::name()
  std::string backend_version;       // Backend::version()
  std::string library;               // library_identity() of the file; empty: none
  std::vector<std::string> devices;  // "NVIDIA H200 (sm_90)", in the backend's order

  bool operator==(const SelfCheckKey&) const = default;
};

// Reads the backend's version and devices; what they throw goes through.
SelfCheckKey key_for(const kernels::Backend& backend, std::string quire_version,
                     const std::filesystem::path& library);

// The file's path, size and modification time, so that a library rebuilt
// or replaced under the same Quire version counts as another one. Empty for
// an empty path; the path alone when the file cannot be read.
std::string library_identity(const std::filesystem::path& library);

// A check's remembered outcome. Checks that could not be completed are not
// remembered: they say nothing about the backend's results.
struct SelfCheckRecord {
  SelfCheckKey key;
  bool passed = false;
  std::string checked_at;  // UTC, "2026-11-26T10:04:51Z"
  std::string summary;
};

// The current time as SelfCheckRecord::checked_at writes it.
std::string utc_now();

// The remembered outcomes of one backend's self-check, in
// <folder>/<backend>-self-check.json (the newest few keys, so that moving
// between device lists does not check again each time), and the details of
// each check run, appended to <folder>/<backend>-self-check.log.
class SelfCheckStore {
 public:
  SelfCheckStore(std::filesystem::path folder, std::string backend);

  // $XDG_CACHE_HOME/Quire, else $HOME/.cache/Quire: what is kept there can
  // be deleted at any time, and is then found out again.
  static std::filesystem::path default_folder();

  const std::filesystem::path& record_file() const { return record_file_; }
  const std::filesystem::path& log_file() const { return log_file_; }

  // The outcome remembered for exactly this key. A file that is missing,
  // unreadable or not what this version writes is treated as empty: the check
  // is then simply run again and the file written anew.
  std::optional<SelfCheckRecord> find(const SelfCheckKey& key) const;
  // Replaces the record of the same key, keeping the newest kKeptRecords.
  // Throws std::runtime_error naming the file when it cannot be written.
  void remember(const SelfCheckRecord& record);
  // Appends a check's details, dropping the oldest when the log grows past
  // kLogLimitBytes. Throws std::runtime_error naming the file on failure.
  void append_log(const std::string& details);

  static constexpr std::size_t kKeptRecords = 8;
  static constexpr std::size_t kLogLimitBytes = 256 * 1024;

 private:
  std::vector<SelfCheckRecord> read_all() const;

  std::filesystem::path folder_;
  std::filesystem::path record_file_;
  std::filesystem::path log_file_;
};

}  // namespace quire::engine::selfcheck
